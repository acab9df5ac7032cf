//! Symbolising calling contexts: (module, offset) frames become function names and source
//! lines, read from the modules' DWARF (or, without debug information, their symbol tables)
//! with the `addr2line` crate — never by running external tools. Each module is loaded once;
//! a module missing on the reading machine leaves its frames as module+offset. Without
//! DWARF, a frame is named after a symbol only if it lies inside that symbol's code (its
//! start and size, from the `object` crate): in a stripped library the nearest exported
//! symbol before a frame is usually another function, and naming the frame after it would
//! mislead — such a frame stays `library+0xoffset`.

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
    modules: HashMap<u32, Option<Module>>,
}

/// A loaded module: its DWARF and symbol lookups, the address it is linked at, and its
/// function symbols as [start, end) ranges, sorted.
struct Module {
    loader: Loader,
    link_base: u64,
    functions: Vec<(u64, u64, String)>,
}

/// The function symbols of an ELF file (static and dynamic tables) with their extents.
fn function_ranges(path: &std::path::Path) -> Vec<(u64, u64, String)> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let Ok(data) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(file) = object::File::parse(&*data) else {
        return Vec::new();
    };
    let mut functions: Vec<(u64, u64, String)> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|symbol| symbol.kind() == SymbolKind::Text && symbol.size() > 0)
        .filter_map(|symbol| {
            let name = symbol.name().ok()?;
            let start = symbol.address();
            Some((start, start.saturating_add(symbol.size()), name.to_string()))
        })
        .collect();
    functions.sort();
    functions.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    functions
}

impl Module {
    /// The function whose code holds `probe`, if a symbol says so.
    fn function_at(&self, probe: u64) -> Option<String> {
        // The symbols starting at or before the probe, nearest first (they may nest).
        let after = self
            .functions
            .partition_point(|(start, _, _)| *start <= probe);
        self.functions[..after]
            .iter()
            .rev()
            .find(|(_, end, _)| probe < *end)
            .map(|(_, _, name)| addr2line::demangle_auto(name.into(), None).into_owned())
    }
}

impl<'a> Symbolizer<'a> {
    pub fn new(trace: &'a Trace) -> Symbolizer<'a> {
        Symbolizer {
            trace,
            modules: HashMap::new(),
        }
    }

    fn module(&mut self, module: u32) -> Option<&Module> {
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
                Some(Module {
                    loader,
                    link_base,
                    functions: function_ranges(&path),
                })
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
            let Some(loaded) = module.and_then(|module| self.module(module)) else {
                frames.push(fallback);
                continue;
            };
            // A return address points after the call; look up the call instruction itself.
            let probe = loaded.link_base + offset.saturating_sub(1);
            let mut found = Vec::new();
            if let Ok(mut iterator) = loaded.loader.find_frames(probe) {
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
                if let Some(function) = loaded.function_at(probe) {
                    found.push(Frame {
                        function,
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
