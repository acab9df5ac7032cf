//! Symbolising calling contexts: (module, offset) frames become function names and source
//! lines, read from the modules' DWARF (or, without debug information, their symbol tables)
//! with the `addr2line` crate — never by running external tools. Each module is loaded once;
//! a module missing on the reading machine leaves its frames as module+offset.

use std::collections::HashMap;

use addr2line::Loader;

use crate::Trace;

/// One symbolised frame (an inlined function is a frame of its own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The function, or `module+0xoffset` when it cannot be named.
    pub function: String,
    /// `file:line`, when the module has line information.
    pub location: Option<String>,
}

pub struct Symbolizer<'a> {
    trace: &'a Trace,
    modules: HashMap<u32, Option<(Loader, u64)>>,
}

impl<'a> Symbolizer<'a> {
    pub fn new(trace: &'a Trace) -> Symbolizer<'a> {
        Symbolizer {
            trace,
            modules: HashMap::new(),
        }
    }

    fn module(&mut self, module: u32) -> Option<&(Loader, u64)> {
        let trace = self.trace;
        self.modules
            .entry(module)
            .or_insert_with(|| {
                let path = std::path::PathBuf::from(
                    String::from_utf8_lossy(trace.modules.get(module as usize)?).as_ref(),
                );
                let loader = Loader::new(&path).ok()?;
                let link_base =
                    crate::elf::Segments::read(&path).map_or(0, |segments| segments.link_base);
                Some((loader, link_base))
            })
            .as_ref()
    }

    fn module_name(&self, module: Option<u32>) -> String {
        module
            .and_then(|module| self.trace.modules.get(module as usize))
            .map(|path| {
                let path = String::from_utf8_lossy(path);
                path.rsplit('/').next().unwrap_or_default().to_string()
            })
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "?".into())
    }

    /// The frames of context `context` (an event's context: index + 1, 0 = unknown), from
    /// the call site outwards.
    pub fn frames(&mut self, context: u32) -> Vec<Frame> {
        let Some(recorded) = context
            .checked_sub(1)
            .and_then(|index| self.trace.contexts.get(index as usize))
        else {
            return Vec::new();
        };
        let mut frames = Vec::new();
        for (module, offset) in recorded.frames.clone() {
            let fallback = Frame {
                function: format!("{}+0x{offset:x}", self.module_name(module)),
                location: None,
            };
            let Some((loader, base)) = module.and_then(|module| self.module(module)) else {
                frames.push(fallback);
                continue;
            };
            // A return address points after the call; look up the call instruction itself.
            let probe = base + offset.saturating_sub(1);
            let mut found = Vec::new();
            if let Ok(mut iterator) = loader.find_frames(probe) {
                while let Ok(Some(frame)) = iterator.next() {
                    let function = frame
                        .function
                        .as_ref()
                        .and_then(|name| name.demangle().ok())
                        .map(|name| name.into_owned());
                    let location = frame.location.as_ref().and_then(|location| {
                        let file = location.file?.rsplit('/').next()?.to_string();
                        Some(match location.line {
                            Some(line) => format!("{file}:{line}"),
                            None => file,
                        })
                    });
                    if let Some(function) = function {
                        found.push(Frame { function, location });
                    }
                }
            }
            if found.is_empty() {
                if let Some(symbol) = loader.find_symbol(probe) {
                    found.push(Frame {
                        function: symbol.to_string(),
                        location: None,
                    });
                }
            }
            if found.is_empty() {
                found.push(fallback);
            }
            frames.extend(found);
        }
        frames
    }
}

/// `main → write_checkpoint → pwrite64`: the stack (frames from [`Symbolizer::frames`]) that
/// led to `call`, outermost first.
pub fn describe(frames: &[Frame], call: &str) -> String {
    let mut names: Vec<&str> = frames
        .iter()
        .rev()
        .map(|frame| frame.function.as_str())
        .collect();
    names.push(call);
    names.join(" → ")
}
