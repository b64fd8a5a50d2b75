//! The rules that hand the selected downloads' packets to the daemon, installed at start and
//! removed at exit, in both `iptables` and `ip6tables` (the `mangle` table, so other tables'
//! rules see the rewritten window).
//!
//! Each rule jumps to `NFQUEUE --queue-bypass`: while no program listens on the queue (the
//! daemon died, even by SIGKILL, leaving the rules behind) the kernel lets packets through
//! unmodified. The daemon also asks for fail-open on its queues, so a stalled daemon whose
//! queue fills up passes packets too. Rules live in chains of their own, `rledbatd-<queue>-in`
//! and `-out`, so removing them never touches anyone else's.

use std::net::IpAddr;
use std::process::Command;

use crate::table::Rules;

/// The two programs and which addresses each takes.
const FAMILIES: [(&str, bool); 2] = [("iptables", false), ("ip6tables", true)];

/// Chain names for queue `q`, and the built-in chain each hangs from.
pub fn chains(queue: u16) -> [(String, &'static str); 2] {
    [(format!("rledbatd-{queue}-in"), "INPUT"), (format!("rledbatd-{queue}-out"), "OUTPUT")]
}

/// The `-A` rules (arguments after the program name) for one address family: incoming
/// packets from a selected server to `queue`, this host's packets to it to `queue + 1`.
pub fn rules(r: &Rules, queue: u16, v6: bool) -> Vec<Vec<String>> {
    let addrs: Vec<Option<IpAddr>> = if r.remote_addrs.is_empty() {
        vec![None]
    } else {
        let mine: Vec<_> = r.remote_addrs.iter().filter(|a| a.is_ipv6() == v6).map(|a| Some(*a)).collect();
        if mine.is_empty() {
            return Vec::new(); // only the other family's servers are selected
        }
        mine
    };
    let or_any = |ports: &[u16]| -> Vec<Option<u16>> {
        if ports.is_empty() {
            vec![None]
        } else {
            ports.iter().map(|p| Some(*p)).collect()
        }
    };
    let [(chain_in, _), (chain_out, _)] = chains(queue);
    let mut out = Vec::new();
    for addr in &addrs {
        for remote in or_any(&r.remote_ports) {
            for local in or_any(&r.local_ports) {
                for (chain, incoming, q) in [(&chain_in, true, queue), (&chain_out, false, queue + 1)] {
                    let (their_addr, their_port, our_port) =
                        if incoming { ("-s", "--sport", "--dport") } else { ("-d", "--dport", "--sport") };
                    let mut rule = vec!["-t", "mangle", "-A", chain, "-p", "tcp"]
                        .into_iter()
                        .map(String::from)
                        .collect::<Vec<_>>();
                    if let Some(a) = addr {
                        rule.extend([their_addr.into(), a.to_string()]);
                    }
                    if let Some(p) = remote {
                        rule.extend([their_port.into(), p.to_string()]);
                    }
                    if let Some(p) = local {
                        rule.extend([our_port.into(), p.to_string()]);
                    }
                    rule.extend(["-j", "NFQUEUE", "--queue-num"].map(String::from));
                    rule.extend([q.to_string(), "--queue-bypass".into()]);
                    out.push(rule);
                }
            }
        }
    }
    out
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program).args(args).output().map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(format!("{program} {}: {}", args.join(" "), err.lines().next().unwrap_or("failed")))
}

/// Installed rules; removed on drop (and by [`remove`] at the next start after a SIGKILL).
pub struct Installed {
    queue: u16,
    programs: Vec<&'static str>,
}

/// Install the rules for `r`; any rules a previous daemon on the same queue left are replaced.
pub fn install(r: &Rules, queue: u16) -> Result<Installed, String> {
    let mut done = Installed { queue, programs: Vec::new() };
    for (program, v6) in FAMILIES {
        let rules = rules(r, queue, v6);
        if rules.is_empty() {
            continue;
        }
        if v6 && Command::new(program).arg("--version").output().is_err() {
            eprintln!("rledbatd: note: no {program}; IPv6 downloads are left alone");
            continue;
        }
        remove_one(program, queue);
        done.programs.push(program);
        for (chain, hook) in chains(queue) {
            run(program, &["-t", "mangle", "-N", &chain])?;
            run(program, &["-t", "mangle", "-I", hook, "-j", &chain])?;
        }
        for rule in &rules {
            run(program, &rule.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
    }
    Ok(done)
}

/// Remove whatever rules of queue `queue` exist (after a daemon killed without a chance to).
pub fn remove(queue: u16) {
    for (program, _) in FAMILIES {
        remove_one(program, queue);
    }
}

fn remove_one(program: &str, queue: u16) {
    for (chain, hook) in chains(queue) {
        // A hook may hold several jumps if someone installed twice; each -D removes one.
        for _ in 0..16 {
            if run(program, &["-t", "mangle", "-D", hook, "-j", &chain]).is_err() {
                break;
            }
        }
        let _ = run(program, &["-t", "mangle", "-F", &chain]);
        let _ = run(program, &["-t", "mangle", "-X", &chain]);
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        for program in &self.programs {
            remove_one(program, self.queue);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_per_direction_and_selection() {
        let r = Rules { remote_ports: vec![443, 80], ..Rules::default() };
        let v4 = rules(&r, 7, false);
        assert_eq!(v4.len(), 4);
        assert_eq!(
            v4[0].join(" "),
            "-t mangle -A rledbatd-7-in -p tcp --sport 443 -j NFQUEUE --queue-num 7 --queue-bypass"
        );
        assert_eq!(
            v4[1].join(" "),
            "-t mangle -A rledbatd-7-out -p tcp --dport 443 -j NFQUEUE --queue-num 8 --queue-bypass"
        );
        assert_eq!(rules(&r, 7, true).len(), 4, "ports alone select both families");
    }

    #[test]
    fn addresses_go_to_their_own_family() {
        let r = Rules {
            remote_addrs: vec!["192.0.2.7".parse().unwrap()],
            local_ports: vec![5000],
            ..Rules::default()
        };
        let v4 = rules(&r, 1, false);
        assert_eq!(v4[0].join(" "), "-t mangle -A rledbatd-1-in -p tcp -s 192.0.2.7 --dport 5000 -j NFQUEUE --queue-num 1 --queue-bypass");
        assert_eq!(v4[1].join(" "), "-t mangle -A rledbatd-1-out -p tcp -d 192.0.2.7 --sport 5000 -j NFQUEUE --queue-num 2 --queue-bypass");
        assert!(rules(&r, 1, true).is_empty(), "no IPv6 server selected");
    }
}
