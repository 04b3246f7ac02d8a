//! `ccf push` / `ccf pull` over `rediss://`: a redis-server with the
//! module on a TLS port, its certificate signed by a CA made here with
//! `openssl`, which `ccf` trusts through `SSL_CERT_FILE` (and refuses
//! without it).
//!
//! Debian's redis-server is built with TLS; the Valkey of
//! scripts/test-redis.sh runs only push_pull.rs.

mod common;
use common::{ccf, free_port, lines, start_with};
use std::path::Path;
use std::process::{Command, Stdio};

/// `openssl args` in `dir`; false when openssl cannot be run.
fn openssl(dir: &Path, args: &[&str]) -> bool {
    match Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(status) => {
            assert!(status.success(), "openssl {args:?}");
            true
        }
        Err(_) => false,
    }
}

#[test]
fn push_and_pull_over_rediss() {
    let certs = tempfile::tempdir().unwrap();
    let c = certs.path();
    let made = openssl(
        c,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=ccf test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
    );
    if !made {
        assert!(
            std::env::var_os("CCF_REQUIRE_REDIS").is_none(),
            "openssl could not be run (CCF_REQUIRE_REDIS is set)"
        );
        println!("skipped: openssl could not be run");
        return;
    }
    std::fs::write(c.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    assert!(openssl(
        c,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    ));
    assert!(openssl(
        c,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "ext.cnf",
            "-out",
            "server.pem",
        ],
    ));
    let tls_port = free_port();
    let path = |name: &str| c.join(name).to_str().unwrap().to_string();
    let Some(server) = start_with(
        true,
        &[
            "--tls-port",
            &tls_port.to_string(),
            "--tls-cert-file",
            &path("server.pem"),
            "--tls-key-file",
            &path("server.key"),
            "--tls-ca-cert-file",
            &path("ca.pem"),
            "--tls-auth-clients",
            "no",
        ],
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let items = lines("t", 300_000);
    std::fs::write(d.join("items.txt"), &items).unwrap();
    ccf(d)
        .args(["build", "items.txt", "-q", "-o", "f.ccf"])
        .args(["--capacity", "300000", "--fingerprint-bits", "32"])
        .assert()
        .success();
    let file = std::fs::read(d.join("f.ccf")).unwrap();
    assert!(file.len() > 1 << 20, "several chunks");
    let url = format!("rediss://127.0.0.1:{tls_port}");

    // A certificate from an unknown CA is refused, in one line.
    let refused = ccf(d)
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .args(["push", "f.ccf", &url, "bl", "-q"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let refused = String::from_utf8(refused).unwrap();
    assert!(refused.starts_with("ccf: error: "), "{refused}");
    assert_eq!(refused.lines().count(), 1, "{refused}");
    assert!(refused.contains("certificate"), "{refused}");

    ccf(d)
        .env("SSL_CERT_FILE", c.join("ca.pem"))
        .args(["push", "f.ccf", &url, "bl", "-q"])
        .assert()
        .success();
    let mut con = server.client();
    let mut pipe = redis::pipe();
    for item in items.lines().step_by(97) {
        pipe.cmd("CF.EXISTS").arg("bl").arg(item);
    }
    let found: Vec<i64> = pipe.query(&mut con).unwrap();
    assert!(found.iter().all(|&f| f == 1));
    ccf(d)
        .env("SSL_CERT_FILE", c.join("ca.pem"))
        .args(["pull", &url, "bl", "back.ccf", "-q"])
        .assert()
        .success();
    assert_eq!(std::fs::read(d.join("back.ccf")).unwrap(), file);
}
