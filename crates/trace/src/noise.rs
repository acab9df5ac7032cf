//! Which files are not the program's own I/O.
//!
//! The dynamic loader, the C runtime and language runtimes (Python's imports) open many
//! files before and around the program's work; counting them would bury the program's own
//! I/O (Python 3.11 alone stats and opens ~100 files to start). Such files are kept in the
//! trace, marked with the reason, and left out of summaries unless asked for.

/// Why a file is not the program's own I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Noise {
    /// Kernel interfaces: `/proc`, `/sys`.
    Kernel,
    /// The dynamic loader: `ld.so.cache`, shared objects.
    Loader,
    /// C runtime data: locales, gconv modules, time zone.
    CRuntime,
    /// A language runtime's own files (Python's standard library and imports).
    LanguageRuntime,
    /// Not a file: sockets, pipes, anonymous inodes.
    NotAFile,
    /// Only touched before `main` started.
    BeforeMain,
    /// Only touched by the MPI library: inside `MPI_Init`/`MPI_Finalize`, or by the POSIX
    /// calls it makes inside MPI-IO calls (lock-test files, shared-memory segments).
    MpiRuntime,
}

impl Noise {
    pub const ALL: [Noise; 7] = [
        Noise::Kernel,
        Noise::Loader,
        Noise::CRuntime,
        Noise::LanguageRuntime,
        Noise::NotAFile,
        Noise::BeforeMain,
        Noise::MpiRuntime,
    ];

    pub fn code(self) -> u64 {
        match self {
            Noise::Kernel => 1,
            Noise::Loader => 2,
            Noise::CRuntime => 3,
            Noise::LanguageRuntime => 4,
            Noise::NotAFile => 5,
            Noise::BeforeMain => 6,
            Noise::MpiRuntime => 7,
        }
    }

    /// Unknown codes (from a newer writer) read as `None`: the file is shown.
    pub fn from_code(code: u64) -> Option<Noise> {
        Noise::ALL.into_iter().find(|noise| noise.code() == code)
    }

    pub fn name(self) -> &'static str {
        match self {
            Noise::Kernel => "kernel interface",
            Noise::Loader => "dynamic loader",
            Noise::CRuntime => "C runtime data",
            Noise::LanguageRuntime => "language runtime",
            Noise::NotAFile => "not a file",
            Noise::BeforeMain => "before main",
            Noise::MpiRuntime => "MPI runtime",
        }
    }
}

fn is_shared_object(path: &[u8]) -> bool {
    let name = path.rsplit(|byte| *byte == b'/').next().unwrap_or(path);
    // libfoo.so, libfoo.so.6, libfoo.so.6.0.1, _ssl.cpython-311-x86_64-linux-gnu.so
    name.windows(3).enumerate().any(|(at, window)| {
        window == b".so"
            && name[at + 3..]
                .iter()
                .all(|byte| *byte == b'.' || byte.is_ascii_digit())
    })
}

fn is_python(executable: &[u8]) -> bool {
    let name = executable
        .rsplit(|byte| *byte == b'/')
        .next()
        .unwrap_or(executable);
    name.starts_with(b"python")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// Classifies a path by name. `python_prefixes` are the installation prefixes of the
/// Python interpreters in the run (`/usr` for `/usr/bin/python3`).
pub fn classify_path(path: &[u8], python_prefixes: &[Vec<u8>]) -> Option<Noise> {
    const KERNEL: [&[u8]; 2] = [b"/proc/", b"/sys/"];
    const C_RUNTIME: [&[u8]; 5] = [
        b"/usr/lib/locale/",
        b"/usr/share/locale/",
        b"/etc/localtime",
        b"/usr/share/zoneinfo/",
        b"/gconv/",
    ];
    if path == b"/proc" || path == b"/sys" || KERNEL.iter().any(|prefix| path.starts_with(prefix)) {
        return Some(Noise::Kernel);
    }
    // A phase the program marked (its name kept as the mark's file).
    if path.starts_with(b"socket:")
        || path.starts_with(b"phase:")
        || path.starts_with(b"pipe:")
        || path.starts_with(b"anon_inode:")
    {
        return Some(Noise::NotAFile);
    }
    // The dynamic loader opens libraries through its own internal calls, which no hook
    // sees; shared objects that show up are read by the program itself (tar, cp) — except
    // in an interpreter, which probes its extension modules by name.
    if path.starts_with(b"/etc/ld.so") || (!python_prefixes.is_empty() && is_shared_object(path)) {
        return Some(Noise::Loader);
    }
    if C_RUNTIME
        .iter()
        .any(|part| path.starts_with(part) || (part.starts_with(b"/gconv") && contains(path, part)))
    {
        return Some(Noise::CRuntime);
    }
    for prefix in python_prefixes {
        if path.starts_with(prefix) && path.len() > prefix.len() {
            let rest = &path[prefix.len()..];
            if rest.starts_with(b"/lib/python")
                || rest.starts_with(b"/lib64/python")
                || rest == b"/pyvenv.cfg"
                || rest == b"/bin/pyvenv.cfg"
                || rest == b"/bin/pybuilddir.txt"
                || rest == b"/bin/Modules/Setup.local"
            {
                return Some(Noise::LanguageRuntime);
            }
        }
    }
    if !python_prefixes.is_empty()
        && (contains(path, b"/__pycache__/")
            || contains(path, b"/site-packages")
            || contains(path, b"/dist-packages")
            || contains(path, b"/lib/python"))
    {
        return Some(Noise::LanguageRuntime);
    }
    None
}

/// The installation prefix of a Python interpreter (`/x/bin/python3.11` → `/x`).
pub fn python_prefix(executable: &[u8]) -> Option<Vec<u8>> {
    if !is_python(executable) {
        return None;
    }
    let directory = &executable[..executable.iter().rposition(|byte| *byte == b'/')?];
    let prefix = directory.strip_suffix(b"/bin")?;
    Some(prefix.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        let prefixes = vec![b"/root/.pyenv/versions/3.11.7".to_vec()];
        let cases: [(&[u8], Option<Noise>); 12] = [
            (b"/proc/self/maps", Some(Noise::Kernel)),
            (b"/sys/devices/system/cpu/online", Some(Noise::Kernel)),
            (b"/etc/ld.so.cache", Some(Noise::Loader)),
            (b"/lib/x86_64-linux-gnu/libc.so.6", Some(Noise::Loader)),
            (
                b"/x/_ssl.cpython-311-x86_64-linux-gnu.so",
                Some(Noise::Loader),
            ),
            (b"/data/results.so.csv", None),
            (b"/usr/lib/locale/locale-archive", Some(Noise::CRuntime)),
            (
                b"/root/.pyenv/versions/3.11.7/lib/python3.11/os.py",
                Some(Noise::LanguageRuntime),
            ),
            (
                b"/home/u/proj/__pycache__/m.cpython-311.pyc",
                Some(Noise::LanguageRuntime),
            ),
            (b"socket:[1234]", Some(Noise::NotAFile)),
            (b"/tmp/out.dat", None),
            (b"/root/.pyenv/versions/3.11.7/data.bin", None),
        ];
        for (path, expected) in cases {
            assert_eq!(
                classify_path(path, &prefixes),
                expected,
                "{}",
                String::from_utf8_lossy(path)
            );
        }
        assert_eq!(
            classify_path(b"/usr/lib/x86_64-linux-gnu/libz.so.1", &[]),
            None,
            "tar reading a library"
        );
        assert_eq!(python_prefix(b"/usr/bin/python3"), Some(b"/usr".to_vec()));
        assert_eq!(python_prefix(b"/usr/bin/perl"), None);
        for noise in Noise::ALL {
            assert_eq!(Noise::from_code(noise.code()), Some(noise));
        }
    }
}
