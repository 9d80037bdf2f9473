//! Measuring a child process: pinned to one core where `taskset` exists, its wall and CPU
//! time and its peak resident memory from `wait4`.

use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How children are pinned to one core.
#[derive(Clone, Copy)]
pub enum Pin {
    /// With `taskset -c CORE`.
    Taskset(u32),
    /// Not pinned (no `taskset`).
    None,
}

impl Pin {
    pub fn detect(core: u32) -> Self {
        let core_arg = core.to_string();
        if succeeds(Command::new("taskset").args(["-c", &core_arg, "true"])) {
            Self::Taskset(core)
        } else {
            Self::None
        }
    }

    /// A command running `program` with `args`, pinned when possible.
    pub fn command(self, program: &Path, args: &[&str]) -> Command {
        match self {
            Self::Taskset(core) => {
                let mut command = Command::new("taskset");
                command
                    .args(["-c", &core.to_string()])
                    .arg(program)
                    .args(args);
                command
            }
            Self::None => {
                let mut command = Command::new(program);
                command.args(args);
                command
            }
        }
    }
}

/// Wall time and peak memory of one child run.
#[derive(Clone, Copy)]
pub struct Usage {
    pub wall: Duration,
    /// User plus system CPU time: less sensitive than wall time to other load on the core.
    pub cpu: Duration,
    pub peak_rss_bytes: u64,
}

/// Runs `command` with stdout to `stdout`, waits with `wait4` and returns its usage; an exit
/// code other than 0 is an error.
pub fn run(command: Command, stdout: Stdio) -> io::Result<Usage> {
    Ok(wait_for(command, stdout, &[0])?.0)
}

/// Runs `command` with stdout discarded; returns its usage and exit code, an error when the
/// code is not one of `ok`.
pub fn run_with_codes(command: Command, ok: &[i32]) -> io::Result<(Usage, i32)> {
    wait_for(command, Stdio::null(), ok)
}

fn wait_for(mut command: Command, stdout: Stdio, ok: &[i32]) -> io::Result<(Usage, i32)> {
    let started = Instant::now();
    let child = command.stdout(stdout).stderr(Stdio::null()).spawn()?;
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child; `status` and `usage` are valid for writes.
    // The child is reaped here, so `child` is dropped without being waited on again.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    drop(child);
    if reaped != pid {
        return Err(io::Error::last_os_error());
    }
    if !libc::WIFEXITED(status) || !ok.contains(&libc::WEXITSTATUS(status)) {
        return Err(io::Error::other(format!(
            "{command:?} failed: status {status}"
        )));
    }
    let seconds = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    let measured = Usage {
        wall,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        // Linux reports ru_maxrss in KiB.
        peak_rss_bytes: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
    };
    Ok((measured, libc::WEXITSTATUS(status)))
}

/// Best wall and CPU time and highest peak memory of `runs` runs.
pub fn best_of(runs: usize, make: impl FnMut() -> Command) -> io::Result<Usage> {
    Ok(best_of_codes(runs, &[0], make)?.0)
}

/// [`best_of`] for a program whose exit code may be any of `ok`; the code of the last run.
pub fn best_of_codes(
    runs: usize,
    ok: &[i32],
    mut make: impl FnMut() -> Command,
) -> io::Result<(Usage, i32)> {
    let mut best: Option<(Usage, i32)> = None;
    for _ in 0..runs {
        let (usage, code) = wait_for(make(), Stdio::null(), ok)?;
        best = Some(match best {
            None => (usage, code),
            Some((b, _)) => (
                Usage {
                    wall: b.wall.min(usage.wall),
                    cpu: b.cpu.min(usage.cpu),
                    peak_rss_bytes: b.peak_rss_bytes.max(usage.peak_rss_bytes),
                },
                code,
            ),
        });
    }
    best.ok_or_else(|| io::Error::other("no runs"))
}

pub fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
