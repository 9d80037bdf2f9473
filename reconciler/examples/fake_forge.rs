//! A loopback stand-in for the GitHub (or GitLab, or Gitea) REST API, for trying `retrace
//! nightly` without a real forge: `cargo run -p reconciler --example fake_forge -- [--gitlab |
//! --gitea] [--listen 127.0.0.1:8787]`. It keeps pull requests in memory, prints each request,
//! and lets you play the reviewer with `curl -X POST URL/_control/merge/NUMBER?sha=COMMIT` or
//! `curl -X POST URL/_control/close/NUMBER`.

#[path = "../tests/it/support/forge.rs"]
mod forge;

use forge::{FakeForge, Kind};

fn main() {
    let mut kind = Kind::Github;
    let mut listen = "127.0.0.1:8787".to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--gitlab" => kind = Kind::Gitlab,
            "--gitea" => kind = Kind::Gitea,
            "--listen" => listen = args.next().unwrap_or(listen),
            other => {
                eprintln!("unknown argument {other}: use [--gitlab | --gitea] [--listen ADDRESS]");
                std::process::exit(1);
            }
        }
    }
    let server = FakeForge::start(kind, &listen);
    println!("fake {kind:?} API at {} (Ctrl-C stops it)", server.url);
    let mut seen = 0;
    loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let requests = server.requests();
        for r in &requests[seen..] {
            println!("{} {}", r.method, r.url);
            if r.method == "POST"
                && (r.url.ends_with("/pulls") || r.url.ends_with("/merge_requests"))
            {
                let title = r.body["title"].as_str().unwrap_or_default();
                println!("  opened: {title}");
            }
        }
        seen = requests.len();
    }
}
