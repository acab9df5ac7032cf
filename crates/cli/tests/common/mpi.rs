//! The two MPI families under test (Open MPI and MPICH from Debian): compiling, launching
//! and tracing a program under either.

use std::process::Command;

use super::{library, programs_directory};
use Mpi::{Mpich, OpenMpi};

/// The two MPI families cairn supports, each from Debian's packages, by their explicit
/// command names (`mpicc` is whichever the alternatives system picked).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mpi {
    OpenMpi,
    Mpich,
}

impl Mpi {
    pub fn command(self, tool: &str) -> String {
        match self {
            OpenMpi => format!("{tool}.openmpi"),
            Mpich => format!("{tool}.mpich"),
        }
    }

    /// Passes `NAME=value` to every rank (`-x` for Open MPI, `-genv` for MPICH's Hydra).
    pub fn pass(self, command: &mut Command, setting: &str) {
        match self {
            OpenMpi => command.arg("-x").arg(setting),
            Mpich => {
                let (name, value) = setting.split_once('=').unwrap();
                command.args(["-genv", name, value])
            }
        };
    }
}

/// Two tests of one body: under Open MPI (`$open_mpi`) and under MPICH (`$mpich`).
#[macro_export]
macro_rules! under_both_mpis {
    ($open_mpi:ident, $mpich:ident, $body:ident) => {
        #[test]
        fn $open_mpi() {
            $body($crate::common::mpi::Mpi::OpenMpi);
        }

        #[test]
        fn $mpich() {
            $body($crate::common::mpi::Mpi::Mpich);
        }
    };
}

impl Mpi {
    /// Compiles `tests/programs/<name>.c` (or `.f90`) with the MPI family's compiler wrapper
    /// into `output`, with extra flags.
    pub fn compile(self, name: &str, output: &std::path::Path, flags: &[&str]) {
        let mpi = self;
        let fortran = programs_directory().join(format!("{name}.f90"));
        let (compiler, source) = if fortran.exists() {
            (mpi.command("mpif90"), fortran)
        } else {
            (
                mpi.command("mpicc"),
                programs_directory().join(format!("{name}.c")),
            )
        };
        let status = Command::new(&compiler)
            .arg("-O1")
            .args(flags)
            .arg("-o")
            .arg(output)
            .arg(source)
            .status()
            .expect("the MPI compiler runs (scripts/install-deps.sh installs Open MPI and MPICH)");
        assert!(status.success(), "compiling {name} with {compiler}");
    }

    /// `mpirun -np N`, oversubscribed and allowed to run as root (CI does).
    pub fn mpirun(self, ranks: usize) -> Command {
        let mpi = self;
        let mut command = Command::new(mpi.command("mpirun"));
        if mpi == OpenMpi {
            command
                .arg("--oversubscribe")
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
        command.args(["-np", &ranks.to_string()]);
        command
    }

    /// `mpirun` with the preload library and `CAIRN_DIR` passed to every rank.
    pub fn mpirun_staged(self, ranks: usize, staging: &std::path::Path) -> Command {
        let mpi = self;
        let mut command = mpi.mpirun(ranks);
        mpi.pass(&mut command, &format!("LD_PRELOAD={}", library().display()));
        mpi.pass(&mut command, &format!("CAIRN_DIR={}", staging.display()));
        command
    }
}
