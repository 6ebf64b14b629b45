//! What `/proc` says about the process to attach to: whether it exists and may be signalled,
//! whether it catches SIGUSR1 (the signal that opens a Node inspector, and that kills a process
//! that does not catch it), whether it looks like a Node runtime, which inspector port its
//! command line asks for, and which TCP ports it listens on.
//!
//! The listening ports are found as `ss -ltnp` finds them: the socket inodes among the
//! process's open files (`/proc/PID/fd/*` links read `socket:[INODE]`), matched against the
//! LISTEN rows (state `0A`) of `/proc/PID/net/tcp` and `tcp6`, which are the tables of the
//! process's own network namespace.

use std::collections::HashSet;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use rustix::process::{Pid, Signal};

/// How a process may be reached.
#[derive(Debug)]
pub(crate) enum Reach {
    /// It exists and this process may signal it.
    Ok,
    /// No such process.
    Missing,
    /// It exists but belongs to another user.
    Denied,
}

/// Whether `pid` exists and may be signalled (`kill(pid, 0)`).
pub(crate) fn reach(pid: u32) -> Reach {
    let Some(pid) = to_pid(pid) else { return Reach::Missing };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => Reach::Ok,
        Err(rustix::io::Errno::PERM) => Reach::Denied,
        Err(_) => Reach::Missing,
    }
}

/// Sends SIGUSR1 to `pid`.
pub(crate) fn send_sigusr1(pid: u32) -> io::Result<()> {
    let pid = to_pid(pid).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    rustix::process::kill_process(pid, Signal::USR1).map_err(io::Error::from)
}

fn to_pid(pid: u32) -> Option<Pid> {
    Pid::from_raw(i32::try_from(pid).ok()?)
}

/// What the process to attach to is.
#[derive(Debug)]
pub(crate) struct ProcessInfo {
    /// `/proc/PID/comm` (the thread name, as `ps` shows it).
    pub(crate) comm: String,
    /// `/proc/PID/exe`, when it could be read.
    pub(crate) exe: Option<PathBuf>,
    /// `/proc/PID/cmdline`, split.
    pub(crate) argv: Vec<String>,
    /// `NODE_OPTIONS` of its environment, when it could be read.
    pub(crate) node_options: Option<String>,
    /// Whether it has a handler for SIGUSR1 (`SigCgt`).
    pub(crate) catches_sigusr1: bool,
    /// Whether it has exited and waits for its parent (state `Z`).
    pub(crate) zombie: bool,
}

impl ProcessInfo {
    /// A short name for messages: the executable's file name, else `comm`.
    pub(crate) fn name(&self) -> String {
        self.exe
            .as_deref()
            .and_then(Path::file_name)
            .map_or_else(|| self.comm.clone(), |n| n.to_string_lossy().trim_end_matches(" (deleted)").to_owned())
    }

    /// Whether it looks like a Node runtime: its executable, its `argv[0]` or its name says
    /// `node` (`node`, `nodejs`, `node20`, …). An embedding of Node under another name
    /// (Electron, a packaged executable) does not pass; it can still be reached by its URL.
    pub(crate) fn looks_like_node(&self) -> bool {
        let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_ascii_lowercase();
        let exe = self.exe.as_deref().map(|p| base(&p.to_string_lossy()));
        let argv0 = self.argv.first().map(|a| base(a));
        [exe, argv0, Some(self.comm.to_ascii_lowercase())].into_iter().flatten().any(|n| n.contains("node"))
    }

    /// The inspector port its options ask for (`--inspect-port`, `--inspect`, …; the command
    /// line wins over `NODE_OPTIONS`, as in Node), if any.
    pub(crate) fn configured_port(&self) -> Option<u16> {
        let from_args = node_args(&self.argv);
        let from_env: Vec<String> =
            self.node_options.as_deref().map(|o| o.split_whitespace().map(str::to_owned).collect()).unwrap_or_default();
        inspect_port(&from_args).or_else(|| inspect_port(&from_env))
    }
}

/// Reads what [`ProcessInfo`] holds. Errors are those of reading `/proc/PID/status`.
pub(crate) fn process_info(pid: u32) -> io::Result<ProcessInfo> {
    let dir = PathBuf::from(format!("/proc/{pid}"));
    let status = std::fs::read_to_string(dir.join("status"))?;
    let field = |name: &str| {
        status.lines().find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(':'))).map(str::trim)
    };
    let caught = field("SigCgt").and_then(|hex| u64::from_str_radix(hex, 16).ok()).unwrap_or(0);
    let sigusr1 = Signal::USR1.as_raw() as u32;
    let catches_sigusr1 = caught & (1u64 << (sigusr1 - 1)) != 0;
    let zombie = field("State").is_some_and(|s| s.starts_with('Z'));
    let comm = std::fs::read_to_string(dir.join("comm")).map(|c| c.trim_end().to_owned()).unwrap_or_default();
    let exe = std::fs::read_link(dir.join("exe")).ok();
    let argv = std::fs::read(dir.join("cmdline"))
        .map(|b| {
            b.split(|&c| c == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect()
        })
        .unwrap_or_default();
    let node_options = std::fs::read(dir.join("environ")).ok().and_then(|env| {
        env.split(|&c| c == 0)
            .find_map(|kv| kv.strip_prefix(b"NODE_OPTIONS=").map(|v| String::from_utf8_lossy(v).into_owned()))
    });
    Ok(ProcessInfo { comm, exe, argv, node_options, catches_sigusr1, zombie })
}

/// Node's own options on a command line: those before the script (or `-e` code) it runs.
fn node_args(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = argv.iter().skip(1);
    while let Some(arg) = rest.next() {
        if !arg.starts_with('-') || arg == "-" || arg == "--" {
            break;
        }
        out.push(arg.clone());
        // The options that take their value as the next argument and matter here.
        if matches!(arg.as_str(), "--inspect-port" | "--debug-port") {
            if let Some(value) = rest.next() {
                out.push(value.clone());
            }
        }
        if matches!(arg.as_str(), "-e" | "--eval" | "-p" | "--print") {
            break;
        }
    }
    out
}

/// The port the last inspector option of `args` names. `--inspect-port=[host:]port` (alias
/// `--debug-port`) sets the port SIGUSR1 opens; `--inspect[=[host:]port]`,
/// `--inspect-brk[=…]` and `--inspect-wait[=…]` set it too, and open the inspector at start.
fn inspect_port(args: &[String]) -> Option<u16> {
    let mut port = None;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (arg.as_str(), None),
        };
        let value = match name {
            "--inspect-port" | "--debug-port" => value.or_else(|| {
                i += 1;
                args.get(i).cloned()
            }),
            "--inspect" | "--inspect-brk" | "--inspect-wait" => value,
            _ => None,
        };
        if let Some(v) = value {
            // `host:port`, `[::1]:port` or `port`.
            if let Some(p) = v.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()) {
                port = Some(p);
            }
        }
        i += 1;
    }
    port
}

/// A listening TCP socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Listener {
    pub(crate) ip: IpAddr,
    pub(crate) port: u16,
    pub(crate) inode: u64,
}

/// The socket inodes among the open files of `pid`.
pub(crate) fn socket_inodes(pid: u32) -> io::Result<HashSet<u64>> {
    let mut out = HashSet::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd"))? {
        let Ok(entry) = entry else { continue };
        // A descriptor closed between the listing and this read is simply skipped.
        let Ok(target) = std::fs::read_link(entry.path()) else { continue };
        if let Some(inode) = target.to_str().and_then(socket_inode) {
            out.insert(inode);
        }
    }
    Ok(out)
}

fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
}

/// Every listening TCP socket of the network namespace of `pid`, whoever holds it.
pub(crate) fn namespace_listeners(pid: u32) -> io::Result<Vec<Listener>> {
    let mut out = Vec::new();
    let mut any = false;
    let mut last_error = None;
    for table in ["tcp", "tcp6"] {
        match std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) {
            Ok(text) => {
                any = true;
                out.extend(parse_tcp_table(&text));
            }
            // A kernel without IPv6 has no tcp6 table.
            Err(e) => last_error = Some(e),
        }
    }
    match (any, last_error) {
        (false, Some(e)) => Err(e),
        _ => Ok(out),
    }
}

/// The listening TCP sockets `pid` holds.
pub(crate) fn listeners(pid: u32) -> io::Result<Vec<Listener>> {
    let inodes = socket_inodes(pid)?;
    let mut out: Vec<Listener> = namespace_listeners(pid)?.into_iter().filter(|l| inodes.contains(&l.inode)).collect();
    out.sort_by_key(|l| (l.port, l.inode));
    Ok(out)
}

/// The LISTEN rows (state `0A`) of a `/proc/net/tcp` or `tcp6` table. Addresses are printed as
/// the kernel holds them: each 32-bit word of the address in the machine's byte order, in hex,
/// then `:` and the port in hex.
fn parse_tcp_table(text: &str) -> Vec<Listener> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
            if *state != "0A" {
                return None;
            }
            let (addr, port) = local.split_once(':')?;
            let ip = parse_hex_ip(addr)?;
            let port = u16::from_str_radix(port, 16).ok()?;
            let inode = inode.parse().ok()?;
            Some(Listener { ip, port, inode })
        })
        .collect()
}

fn parse_hex_ip(hex: &str) -> Option<IpAddr> {
    let word = |i: usize| hex.get(i * 8..i * 8 + 8).and_then(|w| u32::from_str_radix(w, 16).ok()).map(u32::to_ne_bytes);
    match hex.len() {
        8 => Some(IpAddr::V4(Ipv4Addr::from(word(0)?))),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            Some(IpAddr::V6(Ipv6Addr::from(bytes)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|&a| a.to_owned()).collect()
    }

    #[test]
    fn tcp_tables_parse_as_the_kernel_prints_them() {
        let v4 = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
                  0: 0100007F:240D 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1149135 1 0 100 0 0 10 0\n   \
                  1: 0100007F:9C40 0100007F:240D 01 00000000:00000000 00:00000000 00000000     0        0 77 1 0 100 0 0 10 0\n";
        let got = parse_tcp_table(v4);
        if cfg!(target_endian = "little") {
            assert_eq!(got, [Listener { ip: IpAddr::V4(Ipv4Addr::LOCALHOST), port: 9229, inode: 1_149_135 }]);
        }
        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
                  0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 100 0 0 10 0\n";
        let got = parse_tcp_table(v6);
        if cfg!(target_endian = "little") {
            assert_eq!(got, [Listener { ip: IpAddr::V6(Ipv6Addr::LOCALHOST), port: 8080, inode: 4242 }]);
        }
        assert!(parse_tcp_table("header\n garbage\n").is_empty());
    }

    #[test]
    fn socket_links() {
        assert_eq!(socket_inode("socket:[123]"), Some(123));
        assert_eq!(socket_inode("pipe:[123]"), None);
        assert_eq!(socket_inode("/dev/null"), None);
    }

    #[test]
    fn inspector_ports_of_command_lines() {
        let port = |argv: &[&str]| inspect_port(&node_args(&strings(argv)));
        assert_eq!(port(&["node", "app.js"]), None);
        assert_eq!(port(&["node", "--inspect-port=9300", "app.js"]), Some(9300));
        assert_eq!(port(&["node", "--inspect-port", "9301", "app.js"]), Some(9301));
        assert_eq!(port(&["node", "--debug-port=127.0.0.1:9302", "app.js"]), Some(9302));
        assert_eq!(port(&["node", "--inspect=[::1]:9303", "app.js"]), Some(9303));
        assert_eq!(port(&["node", "--inspect", "app.js"]), None);
        assert_eq!(port(&["node", "--inspect-brk=0.0.0.0:9304", "--inspect-port=9305", "app.js"]), Some(9305));
        // The script's own arguments are not Node's.
        assert_eq!(port(&["node", "app.js", "--inspect-port=9306"]), None);
        assert_eq!(port(&["node", "-e", "x", "--inspect-port=9307"]), None);
    }

    #[test]
    fn node_is_recognized_by_its_names() {
        let info = |exe: &str, argv0: &str, comm: &str| ProcessInfo {
            comm: comm.to_owned(),
            exe: (!exe.is_empty()).then(|| PathBuf::from(exe)),
            argv: strings(&[argv0]),
            node_options: None,
            catches_sigusr1: true,
            zombie: false,
        };
        assert!(info("/usr/bin/node", "node", "node").looks_like_node());
        assert!(info("/opt/nodejs/bin/nodejs", "x", "x").looks_like_node());
        assert!(info("", "/usr/local/bin/node", "MainThread").looks_like_node());
        assert!(!info("/usr/bin/sleep", "sleep", "sleep").looks_like_node());
        assert_eq!(info("/usr/bin/sleep (deleted)", "sleep", "sleep").name(), "sleep");
    }

    #[test]
    fn this_process_is_found() {
        let me = std::process::id();
        assert!(matches!(reach(me), Reach::Ok));
        assert!(matches!(reach(0), Reach::Missing));
        assert!(matches!(reach(u32::MAX), Reach::Missing));
        let info = process_info(me).expect("own /proc entry");
        // The test harness installs no SIGUSR1 handler.
        assert!(!info.catches_sigusr1);
        assert!(!info.zombie);
        assert!(listeners(me).is_ok());
    }
}
