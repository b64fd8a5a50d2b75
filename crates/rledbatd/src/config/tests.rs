//! The file and the flags: what they set, and the one-line error for each kind of mistake.

use super::*;

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn err(s: &str) -> String {
    from_args(&args(s)).unwrap_err()
}

#[test]
fn flags_set_rules_and_controller_parameters() {
    let c = from_args(&args("--remote-port 443,80 --local-port=5000 --remote-addr 192.0.2.7 --queue 9 --cc target=40ms --cc enhanced_target=true")).unwrap();
    assert_eq!(c.rules.remote_ports, vec![443, 80]);
    assert_eq!(c.rules.local_ports, vec![5000]);
    assert_eq!(c.rules.remote_addrs, vec!["192.0.2.7".parse::<IpAddr>().unwrap()]);
    assert_eq!(c.queue, 9);
    assert_eq!(c.cc.iter().count(), 2);
}

#[test]
fn the_file_is_read_and_flags_win() {
    let dir = std::env::temp_dir().join(format!("rledbatd-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.toml");
    std::fs::write(
        &path,
        "remote_ports = [443]\nqueue = 7\nlog_interval = \"1s\"\n[cc]\ntarget = \"25ms\"\n",
    )
    .unwrap();
    let c = from_args(&args(&format!("--config {} --queue 8", path.display()))).unwrap();
    assert_eq!((c.rules.remote_ports.clone(), c.queue, c.log_interval), (vec![443], 8, 1_000_000_000));
    std::fs::write(&path, "remote_ports = [443, 70000]\n").unwrap();
    let e = err(&format!("--config {}", path.display()));
    assert!(e.ends_with("remote_ports[1]: expected a port number 1-65535, got 70000"), "{e}");
    std::fs::write(&path, "remote_port = [443]\n").unwrap();
    assert!(err(&format!("--config {}", path.display())).contains("remote_port: unknown setting"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_one_line_naming_the_field() {
    for (input, expect) in [
        ("--remote-port 0", "--remote-port: expected a port number 1-65535, got 0"),
        ("--remote-port x", "--remote-port: expected a port number, got \"x\""),
        ("--remote-addr 1.2.3", "--remote-addr: expected an IPv4 or IPv6 address"),
        ("--remote-port 80 --cc target=fast", "cc.target"),
        ("--remote-port 80 --cc nope=1", "cc.nope"),
        ("--remote-port 80 --log-interval 0", "--log-interval: must be longer than 0"),
        ("--remote-port 80 --bogus 1", "unknown argument --bogus"),
        ("--remote-port", "--remote-port needs a value"),
        ("--queue 65535 --remote-port 1", "--queue: expected a queue number 0-65534"),
        ("--config /nonexistent/r.toml", "--config /nonexistent/r.toml: No such file or directory"),
        ("--config /dev/zero", "--config /dev/zero: is a character device, not a regular file"),
        ("--config=", "--config: the path is empty"),
        ("--no-iptables=1", "--no-iptables takes no value"),
        ("--no-iptables --log --queue 5", "--log needs a value"),
        ("--no-iptables --config", "--config needs a value"),
        ("--no-iptables --cc =5", "--cc: expected KEY=VALUE, got \"=5\""),
        ("--no-iptables --queue -1", "--queue: expected a queue number 0-65534, got -1"),
        ("--no-iptables --duration 99999999999999s", "--duration: duration too large"),
        ("--no-iptables --idle-timeout -1s", "--idle-timeout: a duration must not be negative"),
        ("", "no rules"),
    ] {
        let e = err(input);
        assert!(e.contains(expect), "{input:?} gave {e:?}");
        assert!(!e.contains('\n'), "{e:?}");
    }
}

#[test]
fn without_iptables_no_rule_is_needed() {
    let c = from_args(&args("--no-iptables")).unwrap();
    assert!(!c.iptables);
}
