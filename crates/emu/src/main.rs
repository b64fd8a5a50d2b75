//! The `ccbench-emu` program (to be written): namespaces, forwarder and traffic programs.

fn main() {
    eprintln!("error: ccbench-emu is not built yet");
    std::process::exit(2);
}
