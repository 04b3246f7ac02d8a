"""Writes, in Redis's protocol, the commands that fill the benchmark's
filter and set with the same members: `%012d:%d` of a prefix in 0..n/100
and a suffix in 0..99. redis-benchmark puts one random value in every
`__rand_int__` of a request (`%012d`), so lookups of `__rand_int__:7`, or
of `__rand_int__:0` to `__rand_int__:99` at once, with prefixes drawn from
twice the loaded range, find present and absent members half and half,
each member of a request a different one.

    python protocol.py N KEY COMMAND [ARGS...] | redis-cli --pipe

Each command gets ARGS, then 1000 members (N a multiple of 100).
"""

import sys


def main():
    n, key, command, *args = sys.argv[1:]
    n = int(n)
    assert n % 100 == 0, "N must be a multiple of 100"
    out = sys.stdout.buffer
    head = [command.encode(), key.encode(), *[a.encode() for a in args]]
    members = (b"%012d:%d" % (p, j) for p in range(n // 100) for j in range(100))
    while True:
        batch = [m for _, m in zip(range(1000), members)]
        if not batch:
            break
        parts = head + batch
        out.write(b"".join([b"*%d\r\n" % len(parts)] + [b"$%d\r\n%s\r\n" % (len(p), p) for p in parts]))


if __name__ == "__main__":
    main()
