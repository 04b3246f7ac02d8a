//! `ccf push` and `ccf pull`: a filter file into a Redis/Valkey key with
//! `CF.LOADCHUNK`, and back with `CF.SCANDUMP`.
//!
//! The module's contract: a dump is a sequence of chunks whose
//! concatenation is exactly the library's saved encoding (the file's
//! bytes); each chunk travels with an iterator of `1 +` the byte offset of
//! its end. `CF.LOADCHUNK` takes any in-order split, the first chunk
//! creating the key, and a bad chunk abandons the restore.
//!
//! Push never writes the chunks into the target key: they go into a
//! temporary key in the same cluster slot (with an expiry set by the same
//! script that loads the first chunk, so a killed push never leaves a
//! key that lives forever), and one Lua script renames it over
//! the target once the filter is complete. Any failure before that leaves
//! the target as it was, which a `DEL` before the first chunk (even inside
//! `MULTI`) could not promise for a failure in a later chunk.

use crate::atomic::Output;
use crate::cli::{PullArgs, PushArgs, ServerArgs};
use crate::fail::{Failure, Result};
use crate::filter_file::{self, VERSION_SCALABLE};
use crate::progress;
use concurrent_cuckoo::{ChunkDecoder, FrozenFilter, ScalableCuckooFilter};
use redis::{ConnectionLike, RedisError, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Bytes per `CF.LOADCHUNK` (the module's own `CF.SCANDUMP` chunk size).
const CHUNK: usize = 1 << 20;

/// Chunks sent before reading their replies.
const WINDOW: usize = 8;

/// Expiry of the temporary key, set with the first chunk and renewed with
/// every window of chunks.
const TEMP_TTL_MS: u64 = 10 * 60 * 1000;

/// Loads the first chunk and sets the temporary key's expiry in one
/// atomic step: `KEYS[1]` the temporary key, `ARGV` the iterator, the
/// chunk and the expiry in milliseconds. The first chunk creates the key,
/// so no moment exists when it has no expiry.
const FIRST_CHUNK_SCRIPT: &str = r"
redis.call('CF.LOADCHUNK', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// The module's type name (`TYPE key`).
const MODULE_TYPE: &str = "cuckoo-cf";

/// Renames the complete temporary key over the target: `KEYS[1]` the
/// temporary key, `KEYS[2]` the target, `ARGV[1]` `"1"` to replace. Returns
/// 1 when done, 0 when the target exists and may not be replaced.
const COMMIT_SCRIPT: &str = r"
local t = redis.call('TYPE', KEYS[2]).ok
if t ~= 'none' then
  if ARGV[1] ~= '1' then return 0 end
  if t ~= ARGV[2] then
    return redis.error_reply('WRONGTYPE the key holds a ' .. t .. ', not a cuckoo filter: not replaced')
  end
end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('PERSIST', KEYS[2])
return 1
";

/// A server connection, single node or cluster.
enum Connection {
    Single(redis::Connection),
    // Boxed: with TLS it is several times the size of a single connection.
    Cluster(Box<redis::cluster::ClusterConnection>),
}

impl Connection {
    /// For one command at a time (a cluster routes it by its key).
    fn link(&mut self) -> &mut dyn ConnectionLike {
        match self {
            Self::Single(c) => c,
            Self::Cluster(c) => &mut **c,
        }
    }

    /// Sends `commands` before reading their replies (in a cluster, one
    /// after the other); the first error reply, if any, is the result.
    fn pipeline(&mut self, commands: Vec<redis::Cmd>) -> redis::RedisResult<()> {
        match self {
            Self::Single(c) => {
                let mut pipe = redis::pipe();
                for cmd in commands {
                    pipe.add_command(cmd);
                }
                pipe.query(c)
            }
            // One at a time: the redis crate (0.32) follows ASK, MOVED and
            // TRYAGAIN for a single command, but in a cluster pipeline it
            // returns them as errors (a slot migrating mid-push failed with
            // "ASK"). A chunk is 1 MiB, so a round trip each costs little.
            Self::Cluster(c) => {
                for cmd in commands {
                    cmd.query::<Value>(&mut **c)?;
                }
                Ok(())
            }
        }
    }
}

fn connect(url: &str, server: &ServerArgs) -> Result<Connection> {
    // rustls's crypto for rediss:// (an error only when already installed).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let timeout = Duration::from_secs(server.timeout.max(1));
    let bad_url = |e: &RedisError| {
        let hint = if url.contains("://") {
            ""
        } else {
            " (a URL starts with redis://, rediss:// or redis+unix://, e.g. redis://127.0.0.1:6379)"
        };
        Failure::new(format!("bad server URL {url:?}: {}{hint}", describe(e)))
    };
    if server.cluster {
        let client = redis::cluster::ClusterClient::builder(vec![url])
            .connection_timeout(timeout)
            .response_timeout(timeout)
            .build()
            .map_err(|e| bad_url(&e))?;
        let con = client.get_connection().map_err(|e| {
            Failure::new(format!("cannot connect to the cluster: {}", describe(&e)))
        })?;
        Ok(Connection::Cluster(Box::new(con)))
    } else {
        let client = redis::Client::open(url).map_err(|e| bad_url(&e))?;
        let addr = client.get_connection_info().addr.to_string();
        let con = client
            .get_connection_with_timeout(timeout)
            .map_err(|e| Failure::new(format!("cannot connect to {addr}: {}", describe(&e))))?;
        let set = con
            .set_read_timeout(Some(timeout))
            .and_then(|()| con.set_write_timeout(Some(timeout)));
        set.map_err(|e| Failure::new(format!("{addr}: {}", describe(&e))))?;
        Ok(Connection::Single(con))
    }
}

/// A server or client error as one line in the user's words: the redis
/// crate's own names (`AuthenticationFailed`, `InvalidClientConfig`,
/// `ClusterConnectionNotFound`) replaced, a server's reply kept as its
/// code and text, and anything on several lines joined into one.
fn describe(e: &RedisError) -> String {
    use redis::ErrorKind;
    let text = match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        _ => match e.kind() {
            ErrorKind::AuthenticationFailed => {
                "the server refused the user name or password (check them in the URL)".into()
            }
            ErrorKind::InvalidClientConfig => e
                .detail()
                .unwrap_or("not a URL the redis client takes")
                .to_string(),
            ErrorKind::ClusterConnectionNotFound => {
                "no node of the cluster could be reached (is it a cluster? is --cluster right?)"
                    .into()
            }
            ErrorKind::ParseError => {
                "the server does not speak the Redis protocol (RESP): is the port right?".into()
            }
            ErrorKind::IoError if e.is_timeout() => {
                "no answer in time (--timeout raises the limit)".into()
            }
            ErrorKind::IoError => match e.detail() {
                Some(detail) => detail.to_string(),
                None => e.to_string(),
            },
            _ => match e.code() {
                Some(code) => format!("{code} ({e})"),
                None => e.to_string(),
            },
        },
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A failed command, explained where the cause is common.
fn command_failed(what: &str, e: &RedisError) -> Failure {
    let text = describe(e);
    let hint = if text.contains("unknown command") {
        ": the server has no cuckoo filter module (redis-server --loadmodule \
         .../libconcurrent_cuckoo_redis.so)"
    } else if text.starts_with("WRONGTYPE") && !text.contains("not a cuckoo filter") {
        ": the key holds another type"
    } else if text == "ERR not found" {
        ": no such key"
    } else {
        ""
    };
    Failure::new(format!("{what}: {text}{hint}"))
}

/// Fails unless the server knows `command` (the module is loaded): a
/// server without it would answer an error that echoes the binary chunk.
fn require_module(con: &mut dyn ConnectionLike, command: &str) -> Result<()> {
    let info: Value = redis::cmd("COMMAND")
        .arg("INFO")
        .arg(command)
        .query(con)
        .map_err(|e| command_failed("COMMAND INFO", &e))?;
    match info {
        Value::Array(items) if items.first().is_some_and(|v| *v != Value::Nil) => Ok(()),
        _ => Err(Failure::new(format!(
            "the server has no {command} command: it has no cuckoo filter module \
             (redis-server --loadmodule .../libconcurrent_cuckoo_redis.so)"
        ))),
    }
}

/// The part of a key that picks its cluster slot (the hash tag rule).
fn slot_part(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// A fresh key in `key`'s cluster slot: `{tag}` then a unique suffix.
fn temporary_key(key: &str, cluster: bool) -> Result<String> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let part = slot_part(key.as_bytes());
    if part.contains(&b'}') && !cluster {
        return Ok(format!("ccf-push-tmp:{}-{nanos}", std::process::id()));
    }
    if part.contains(&b'}') {
        return Err(Failure::new(format!(
            "cannot make a temporary key in the cluster slot of {key:?} (a '}}' outside a \
             hash tag): rename the key or give it a hash tag such as {{{key}}}"
        )));
    }
    let part = String::from_utf8_lossy(part);
    Ok(format!(
        "{{{part}}}:ccf-push-tmp:{}-{nanos}",
        std::process::id()
    ))
}

/// The file's bytes, checked: a mapped fixed filter, or a growing one read
/// into memory.
enum FileBytes {
    Mapped(FrozenFilter<concurrent_cuckoo::MappedFile>),
    Read(Vec<u8>),
}

impl FileBytes {
    fn load(path: &std::path::Path) -> Result<Self> {
        if path.as_os_str() == "-" {
            let bytes = filter_file::read_stdin()?;
            let name = filter_file::name_of(path);
            let bad = |e: concurrent_cuckoo::DecodeError| Failure::new(format!("{name}: {e}"));
            if filter_file::version_of(&name, &bytes)? == VERSION_SCALABLE {
                ScalableCuckooFilter::from_bytes(&bytes).map_err(bad)?;
            } else {
                FrozenFilter::from_bytes(&bytes[..]).map_err(bad)?;
            }
            return Ok(Self::Read(bytes));
        }
        let version = filter_file::format_version(path)?;
        let bad =
            |e: concurrent_cuckoo::DecodeError| Failure::new(format!("{}: {e}", path.display()));
        if version == VERSION_SCALABLE {
            let bytes = std::fs::read(path)
                .map_err(|e| Failure::new(format!("cannot read {}: {e}", path.display())))?;
            ScalableCuckooFilter::from_bytes(&bytes).map_err(bad)?;
            Ok(Self::Read(bytes))
        } else {
            match filter_file::open(path, true)? {
                (_, filter_file::Opened::Mapped(f), _) => Ok(Self::Mapped(f)),
                _ => unreachable!("a fixed filter opened with map = true is mapped"),
            }
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Self::Mapped(f) => f.as_bytes(),
            Self::Read(v) => v,
        }
    }
}

pub fn push(args: &PushArgs) -> Result<()> {
    let file = FileBytes::load(&args.file)?;
    let bytes = file.bytes();
    let mut con = connect(&args.url, &args.server)?;
    let key = args.key.as_str();
    require_module(con.link(), "CF.LOADCHUNK")?;
    // Refuse early what the commit script would refuse at the end.
    let existing: String = redis::cmd("TYPE")
        .arg(key)
        .query(con.link())
        .map_err(|e| command_failed("TYPE", &e))?;
    if existing != "none" && existing != MODULE_TYPE {
        return Err(Failure::new(format!(
            "the key {key:?} holds a {existing}, not a cuckoo filter: not replaced"
        )));
    }
    if existing != "none" && !args.replace {
        return Err(Failure::new(format!(
            "the key {key:?} exists: --replace to overwrite it"
        )));
    }
    let temp = temporary_key(key, args.server.cluster)?;
    if args.server.verbose {
        eprintln!(
            "pushing {} ({}) to key {key:?} ({}): {} chunk(s) of at most {} into temporary \
             key {temp:?}, {} per round trip",
            filter_file::name_of(&args.file),
            progress::size(bytes.len() as u64),
            if existing == "none" {
                "new"
            } else {
                "replaced"
            },
            bytes.len().div_ceil(CHUNK),
            progress::size(CHUNK as u64),
            if args.server.cluster { 1 } else { WINDOW },
        );
    }
    let bar = progress::bytes(Some(bytes.len() as u64), args.server.quiet);
    let sent = send_chunks(&mut con, &temp, bytes, &bar);
    bar.finish_and_clear();
    let committed = sent.and_then(|()| {
        redis::cmd("EVAL")
            .arg(COMMIT_SCRIPT)
            .arg(2)
            .arg(&temp)
            .arg(key)
            .arg(if args.replace { "1" } else { "0" })
            .arg(MODULE_TYPE)
            .query::<i64>(con.link())
            .map_err(|e| command_failed("replacing the key", &e))
    });
    match committed {
        Ok(1) => {
            if !args.server.quiet {
                eprintln!(
                    "pushed {} ({}) to key {key:?}",
                    filter_file::name_of(&args.file),
                    progress::size(bytes.len() as u64)
                );
            }
            Ok(())
        }
        outcome => {
            // Best effort: the temporary key also expires by itself.
            let _ = redis::cmd("DEL").arg(&temp).query::<i64>(con.link());
            match outcome {
                Ok(_) => Err(Failure::new(format!(
                    "the key {key:?} was created during the push: --replace to overwrite it"
                ))),
                Err(e) => Err(e),
            }
        }
    }
}

/// `CF.LOADCHUNK` of every chunk into `temp`: the first with the key's
/// expiry ([`FIRST_CHUNK_SCRIPT`]), the others [`WINDOW`] at a time.
fn send_chunks(
    con: &mut Connection,
    temp: &str,
    bytes: &[u8],
    bar: &indicatif::ProgressBar,
) -> Result<()> {
    let chunks: Vec<&[u8]> = bytes.chunks(CHUNK).collect();
    let Some((first, rest)) = chunks.split_first() else {
        return Err(Failure::new("the filter file is empty"));
    };
    let mut offset = first.len() as u64;
    redis::cmd("EVAL")
        .arg(FIRST_CHUNK_SCRIPT)
        .arg(1)
        .arg(temp)
        .arg(offset + 1)
        .arg(*first)
        .arg(TEMP_TTL_MS)
        .query::<i64>(con.link())
        .map_err(|e| command_failed("CF.LOADCHUNK", &e))?;
    bar.inc(offset);
    for window in rest.chunks(WINDOW) {
        let mut commands = Vec::with_capacity(window.len() + 1);
        let mut window_bytes = 0u64;
        for chunk in window {
            offset += chunk.len() as u64;
            window_bytes += chunk.len() as u64;
            let mut cmd = redis::cmd("CF.LOADCHUNK");
            cmd.arg(temp).arg(offset + 1).arg(*chunk);
            commands.push(cmd);
        }
        let mut expire = redis::cmd("PEXPIRE");
        expire.arg(temp).arg(TEMP_TTL_MS);
        commands.push(expire);
        con.pipeline(commands)
            .map_err(|e| command_failed("CF.LOADCHUNK", &e))?;
        bar.inc(window_bytes);
    }
    Ok(())
}

pub fn pull(args: &PullArgs) -> Result<()> {
    // The output first: one that cannot be written fails before the transfer.
    let mut out = Output::create(&args.file)?;
    let mut con = connect(&args.url, &args.server)?;
    require_module(con.link(), "CF.SCANDUMP")?;
    if args.server.verbose {
        eprintln!(
            "pulling key {:?} into {} with CF.SCANDUMP (up to {} restarts)",
            args.key,
            out.name(),
            args.retries
        );
    }
    let bar = progress::bytes(None, args.server.quiet);
    let mut attempt = 0;
    let total = loop {
        out.truncate()?;
        bar.set_position(0);
        match dump(con.link(), &args.key, &mut out, &bar) {
            Ok(total) => break total,
            Err(Dump::Changed) if attempt < args.retries => {
                attempt += 1;
                bar.set_message(format!("the filter changed: attempt {}", attempt + 1));
            }
            Err(Dump::Changed) => {
                bar.finish_and_clear();
                return Err(Failure::new(format!(
                    "the filter kept changing during CF.SCANDUMP ({} attempts): \
                     nothing was written; --retries to try longer",
                    attempt + 1
                )));
            }
            Err(Dump::Failed(f)) => {
                bar.finish_and_clear();
                return Err(f);
            }
        }
    };
    bar.finish_and_clear();
    let name = out.name();
    out.commit()?;
    if !args.server.quiet {
        eprintln!(
            "pulled key {:?} into {name} ({})",
            args.key,
            progress::size(total)
        );
    }
    Ok(())
}

/// Why a dump stopped.
enum Dump {
    /// The filter changed between two chunks: start again.
    Changed,
    Failed(Failure),
}

impl From<Failure> for Dump {
    fn from(f: Failure) -> Self {
        Self::Failed(f)
    }
}

/// One complete `CF.SCANDUMP` pass into `out`, decoded as it arrives.
/// Returns the encoding's length.
fn dump(
    con: &mut dyn ConnectionLike,
    key: &str,
    out: &mut Output,
    bar: &indicatif::ProgressBar,
) -> std::result::Result<u64, Dump> {
    let mut decoder: ChunkDecoder = ChunkDecoder::new();
    let mut iterator = 0u64;
    loop {
        let reply: Value = redis::cmd("CF.SCANDUMP")
            .arg(key)
            .arg(iterator)
            .query(con)
            .map_err(|e| {
                if describe(&e).contains("start again from iterator 0") {
                    Dump::Changed
                } else {
                    Dump::Failed(command_failed("CF.SCANDUMP", &e))
                }
            })?;
        let (next, chunk) = parse_dump_reply(reply)?;
        if next == 0 {
            break;
        }
        let consumed = decoder.consumed();
        if chunk.is_empty() || next != consumed + chunk.len() as u64 + 1 {
            return Err(Failure::new(format!(
                "CF.SCANDUMP answered iterator {next} for {} bytes at offset {consumed}: \
                 not the module's dump",
                chunk.len()
            ))
            .into());
        }
        decoder
            .feed(&chunk)
            .map_err(|e| Failure::new(format!("the dump is not a valid filter: {e}")))?;
        std::io::Write::write_all(out, &chunk)
            .map_err(|e| Failure::new(format!("writing {}: {e}", out.name())))?;
        bar.inc(chunk.len() as u64);
        iterator = next;
    }
    let total = decoder.consumed();
    if total == 0 {
        // RedisBloom's contract, which the module follows: a filter with
        // no items has no dump (`[0, nil]` at iterator 0).
        return Err(Failure::new(format!(
            "CF.SCANDUMP of {key:?} returned no data: a filter with no items has no dump"
        ))
        .into());
    }
    decoder
        .finish()
        .map_err(|e| Failure::new(format!("the dump is not a valid filter: {e}")))?;
    Ok(total)
}

/// `[next, chunk]`, the chunk `nil` or empty at the end.
fn parse_dump_reply(reply: Value) -> std::result::Result<(u64, Vec<u8>), Dump> {
    let unexpected = |v: &Value| {
        Dump::Failed(Failure::new(format!(
            "CF.SCANDUMP returned {v:?}, not [iterator, chunk]"
        )))
    };
    let Value::Array(items) = reply else {
        return Err(unexpected(&reply));
    };
    match <[Value; 2]>::try_from(items) {
        Ok([Value::Int(next), chunk]) if next >= 0 => match chunk {
            Value::BulkString(bytes) => Ok((next as u64, bytes)),
            Value::Nil => Ok((next as u64, Vec::new())),
            other => Err(unexpected(&other)),
        },
        Ok(pair) => Err(unexpected(&Value::Array(pair.into()))),
        Err(items) => Err(unexpected(&Value::Array(items))),
    }
}

#[cfg(test)]
mod tests {
    use super::{slot_part, temporary_key};

    #[test]
    fn hash_tags() {
        assert_eq!(slot_part(b"plain"), b"plain");
        assert_eq!(slot_part(b"user:{42}:set"), b"42");
        assert_eq!(slot_part(b"a{}b"), b"a{}b");
        assert_eq!(slot_part(b"a{b"), b"a{b");
        assert_eq!(slot_part(b"{x}{y}"), b"x");
    }

    #[test]
    fn temporary_keys_share_the_slot() {
        for key in ["plain", "user:{42}:set", "a{b", "{x}{y}"] {
            let temp = temporary_key(key, true).unwrap();
            assert_eq!(
                slot_part(temp.as_bytes()),
                slot_part(key.as_bytes()),
                "{key}"
            );
            assert_ne!(temp, key);
        }
        assert!(temporary_key("a}b", true).is_err());
        assert!(temporary_key("a{}b", true).is_err());
        assert!(temporary_key("a}b", false).is_ok());
    }
}
