//! A dataplane host pulls a filter out of a live Redis with `CF.SCANDUMP`
//! and queries it in place: the chunks, concatenated, are exactly the
//! library's saved format, so `FrozenFilter::from_bytes` (a fixed filter)
//! or `ScalableCuckooFilter::from_bytes` (a growing one) opens them, and
//! they answer every item the server holds.
//!
//! Starts its own server (`CCF_SERVER`, a path to `redis-server` or
//! `valkey-server`; `redis-server` from `PATH` by default) with the module
//! built by this cargo invocation. Without `redis-server` it says it is skipped,
//! unless `CCF_REQUIRE_REDIS` is set (as `scripts/test.sh` sets it), when
//! that is a failure.

use concurrent_cuckoo::{FrozenFilter, ScalableCuckooFilter};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A RESP reply.
#[derive(Debug, PartialEq)]
enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

/// A minimal RESP2 client: enough for these commands.
struct Client {
    out: TcpStream,
    input: BufReader<TcpStream>,
}

impl Client {
    fn connect(port: u16) -> std::io::Result<Self> {
        let out = TcpStream::connect(("127.0.0.1", port))?;
        let input = BufReader::new(out.try_clone()?);
        Ok(Self { out, input })
    }

    fn call(&mut self, args: &[&[u8]]) -> Reply {
        let mut request = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            request.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            request.extend_from_slice(arg);
            request.extend_from_slice(b"\r\n");
        }
        self.out.write_all(&request).unwrap();
        self.reply()
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.input.read_line(&mut line).unwrap();
        line.trim_end_matches("\r\n").to_string()
    }

    fn reply(&mut self) -> Reply {
        let line = self.line();
        let (kind, rest) = line.split_at(1);
        match kind {
            "+" => Reply::Simple(rest.to_string()),
            "-" => Reply::Error(rest.to_string()),
            ":" => Reply::Int(rest.parse().unwrap()),
            "$" => {
                let n: i64 = rest.parse().unwrap();
                if n < 0 {
                    return Reply::Bulk(None);
                }
                let mut data = vec![0u8; n as usize + 2];
                self.input.read_exact(&mut data).unwrap();
                data.truncate(n as usize);
                Reply::Bulk(Some(data))
            }
            "*" => {
                let n: usize = rest.parse().unwrap();
                Reply::Array((0..n).map(|_| self.reply()).collect())
            }
            _ => panic!("unexpected reply line {line:?}"),
        }
    }

    /// The concatenated `CF.SCANDUMP` chunks of `key`.
    fn scandump(&mut self, key: &str) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut iterator = 0i64;
        loop {
            let it = iterator.to_string();
            let Reply::Array(reply) = self.call(&[b"CF.SCANDUMP", key.as_bytes(), it.as_bytes()])
            else {
                panic!("CF.SCANDUMP {key} {iterator}");
            };
            match &reply[..] {
                [Reply::Int(0), Reply::Bulk(None)] => return bytes,
                [Reply::Int(next), Reply::Bulk(Some(chunk))] => {
                    bytes.extend_from_slice(chunk);
                    iterator = *next;
                }
                other => panic!("CF.SCANDUMP replied {other:?}"),
            }
        }
    }
}

/// A redis-server with the module, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The module this cargo invocation built (the crate is a `cdylib` and an
/// `rlib`, so building this test builds both): next to this test's
/// executable in `deps/`, or in the directory above.
fn module() -> PathBuf {
    if let Some(path) = std::env::var_os("CCF_REDIS_MODULE") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|dir| dir.join("libconcurrent_cuckoo_redis.so"))
        .find(|path| path.exists())
        .unwrap_or_else(|| deps.join("libconcurrent_cuckoo_redis.so"))
}

fn start() -> Option<Server> {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let dir = std::env::temp_dir().join(format!("ccf-redis-scandump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let module = module();
    assert!(
        module.exists(),
        "the module is not built: {}",
        module.display()
    );
    let binary = std::env::var_os("CCF_SERVER").unwrap_or_else(|| "redis-server".into());
    let child = Command::new(&binary)
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--logfile",
            "redis.log",
        ])
        .arg("--dir")
        .arg(&dir)
        .arg("--loadmodule")
        .arg(&module)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match child {
        Ok(child) => child,
        Err(e) if std::env::var_os("CCF_REQUIRE_REDIS").is_none() => {
            println!(
                "skipped: redis-server could not be started ({e}); scripts/test.sh installs it"
            );
            return None;
        }
        Err(e) => panic!("{}: {e}", binary.to_string_lossy()),
    };
    let server = Server { child, port };
    let deadline = Instant::now() + Duration::from_secs(20);
    while Client::connect(port).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(server)
}

fn items(prefix: &str, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{prefix}:{i}").into_bytes())
        .collect()
}

fn insert(client: &mut Client, key: &str, items: &[Vec<u8>]) {
    for chunk in items.chunks(1000) {
        let mut args: Vec<&[u8]> = vec![b"CF.INSERT", key.as_bytes(), b"ITEMS"];
        args.extend(chunk.iter().map(Vec::as_slice));
        let Reply::Array(replies) = client.call(&args) else {
            panic!("CF.INSERT");
        };
        assert!(replies.iter().all(|r| *r == Reply::Int(1)));
    }
}

#[test]
fn a_filter_pulled_with_scandump_opens_in_place_and_answers_as_the_server() {
    let Some(server) = start() else {
        return;
    };
    let mut client = Client::connect(server.port).unwrap();
    // A fixed filter of 3 MB: several 1 MiB chunks.
    assert_eq!(
        client.call(&[b"CF.RESERVE", b"blocklist", b"1000000", b"EXPANSION", b"0"]),
        Reply::Simple("OK".into())
    );
    let blocked = items("203.0.113", 300_000);
    insert(&mut client, "blocklist", &blocked);
    let bytes = client.scandump("blocklist");
    assert!(bytes.len() > 2 << 20);
    let view = FrozenFilter::from_bytes(&bytes[..]).expect("the chunks are the saved format");
    assert_eq!(view.len(), blocked.len());
    // Items as the server got them: byte strings (`&[u8]` keys).
    assert!(blocked.iter().all(|item| view.contains(&item[..])));
    let absent = items("198.51.100", 100_000);
    let false_positives = absent.iter().filter(|i| view.contains(&i[..])).count();
    assert!(false_positives < 100, "{false_positives}");
    for probe in absent
        .iter()
        .step_by(997)
        .chain(blocked.iter().step_by(997))
    {
        let Reply::Int(server_says) = client.call(&[b"CF.EXISTS", b"blocklist", probe]) else {
            panic!("CF.EXISTS");
        };
        assert_eq!(server_says == 1, view.contains(&probe[..]));
    }

    // A growing filter: the library's container of levels.
    client.call(&[b"CF.RESERVE", b"growing", b"1000", b"EXPANSION", b"2"]);
    let grown = items("user", 100_000);
    insert(&mut client, "growing", &grown);
    let bytes = client.scandump("growing");
    let filter = ScalableCuckooFilter::from_bytes(&bytes).expect("a growing filter's encoding");
    assert!(filter.levels() > 1);
    assert_eq!(filter.len(), grown.len());
    assert!(grown.iter().all(|item| filter.contains(&item[..])));
}
