#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""klogparse.py FORMAT LOG...: parse the agent's log as a log shipper
written for kube-proxy would, and fail on any line it cannot read.

FORMAT text: klog's header grammar (k8s.io/klog/v2, "Lmmdd
hh:mm:ss.uuuuuu threadid file:line] msg"), the structured message of
InfoS/ErrorS ("msg" then key=value pairs, a value a Go-quoted string, a
bare word such as a number or true/false, or the multi-line "key=<" block
whose lines start with a tab and which ends with " >").  The quoted
strings are decoded with Go's escape set (\\a \\b \\f \\n \\r \\t \\v \\\\
\\" \\xHH \\uXXXX \\UXXXXXXXX); anything else in them is an error.

FORMAT json: component-base's JSON lines: one object per line, "ts"
(a number, milliseconds since the epoch), "caller" (dir/file:line),
"msg" (a string), "v" (an integer, absent on errors), then the keys.

Prints one summary line ("N lines, M with pairs, severities ...") and the
first errors; exit status 0 when every line parsed and at least one did.
Options: --want-v N (some line has verbosity N: JSON "v"), --want-key K
(some line has the key K), --want-msg M (some line has the message M).
"""
import json
import re
import sys

HEADER = re.compile(
    r'^(?P<sev>[IWEF])(?P<mon>0[1-9]|1[0-2])(?P<day>0[1-9]|[12][0-9]|3[01]) '
    r'(?P<h>[01][0-9]|2[0-3]):(?P<m>[0-5][0-9]):(?P<s>[0-5][0-9]|60)\.(?P<us>[0-9]{6}) '
    r'(?P<tid> *[0-9]+) (?P<file>[^ :\]]+):(?P<line>[0-9]+)\] (?P<rest>.*)$')
# A Go-quoted string: printable characters other than '"' and '\\', or escapes.
GOSTR = (r'"(?:[^"\\\x00-\x1f\x7f]|\\[abfnrtv\\"]|\\x[0-9a-f]{2}'
         r'|\\u[0-9a-f]{4}|\\U[0-9a-f]{8})*"')
KEY = r'[A-Za-z_][A-Za-z0-9_.\-/]*'
PAIR = re.compile(r' (?P<k>' + KEY + r')=(?:(?P<q>' + GOSTR + r')|(?P<ml><)$|(?P<bare>[^ "<][^ ]*))')
MSG = re.compile(r'^(?P<msg>' + GOSTR + r')')


def go_unquote(s):
    """Decodes a Go-quoted string to bytes (it may hold invalid UTF-8)."""
    out = bytearray()
    i, s = 1, s[:-1]
    esc = {'a': 7, 'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11, '\\': 92, '"': 34}
    while i < len(s):
        c = s[i]
        if c != '\\':
            out += c.encode()
            i += 1
            continue
        e = s[i + 1]
        if e in esc:
            out.append(esc[e])
            i += 2
        elif e == 'x':
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        elif e in 'uU':
            n = 4 if e == 'u' else 8
            out += chr(int(s[i + 2:i + 2 + n], 16)).encode('utf-8', 'surrogatepass')
            i += 2 + n
        else:
            raise ValueError('bad escape \\' + e)
    return bytes(out)


def parse_text(lines):
    """Yields (severity, msg bytes, {key: value}) or raises ValueError."""
    i = 0
    while i < len(lines):
        ln = lines[i]
        i += 1
        m = HEADER.match(ln)
        if not m:
            raise ValueError('line %d: no klog header: %r' % (i, ln[:120]))
        rest = m.group('rest')
        mm = MSG.match(rest)
        if not mm:
            raise ValueError('line %d: message not a Go-quoted string: %r' % (i, rest[:120]))
        msg = go_unquote(mm.group('msg'))
        rest = rest[mm.end():]
        kv = {}
        while rest:
            p = PAIR.match(rest)
            if not p:
                raise ValueError('line %d: bad key=value at %r' % (i, rest[:80]))
            k = p.group('k')
            if p.group('q') is not None:
                kv[k] = go_unquote(p.group('q'))
                rest = rest[p.end():]
            elif p.group('bare') is not None:
                kv[k] = p.group('bare').encode()
                rest = rest[p.end():]
            else:
                val = []
                while True:
                    if i >= len(lines):
                        raise ValueError('line %d: multi-line value %s never ends' % (i, k))
                    nxt = lines[i]
                    i += 1
                    if nxt.startswith('\t'):
                        val.append(nxt[1:])
                        continue
                    if nxt.startswith(' >'):
                        rest = nxt[2:]
                        break
                    raise ValueError('line %d: in value %s: %r' % (i, k, nxt[:80]))
                kv[k] = '\n'.join(val).encode()
        yield m.group('sev'), msg, kv


def parse_json(lines):
    for n, ln in enumerate(lines, 1):
        try:
            o = json.loads(ln, object_pairs_hook=lambda p: p)
        except ValueError as e:
            raise ValueError('line %d: not JSON (%s): %r' % (n, e, ln[:120]))
        keys = [k for k, _ in o]
        d = dict(o)
        if keys[:3] != ['ts', 'caller', 'msg']:
            raise ValueError('line %d: keys %s do not start ts, caller, msg' % (n, keys))
        if not isinstance(d['ts'], float) or d['ts'] < 1e12:
            raise ValueError('line %d: ts %r not milliseconds' % (n, d['ts']))
        if not re.fullmatch(r'([^/]+/)?[^/:]+:[0-9]+', d['caller']):
            raise ValueError('line %d: caller %r' % (n, d['caller']))
        if not isinstance(d['msg'], str):
            raise ValueError('line %d: msg not a string' % n)
        if 'v' in d:
            if keys[3] != 'v' or not isinstance(d['v'], int) or isinstance(d['v'], bool):
                raise ValueError('line %d: v %r not the integer after msg' % (n, d['v']))
        if 'err' in d and keys[-1] != 'err':
            raise ValueError('line %d: err not last' % n)
        sev = 'I' if 'v' in d else 'E'
        kv = {k: v for k, v in o[3:] if k != 'v'}
        kv['v'] = d.get('v')
        yield sev, d['msg'].encode(), kv


def main(argv):
    want_v, want_key, want_msg, files = [], [], [], []
    fmt = argv[1]
    a = argv[2:]
    while a:
        if a[0] in ('--want-v', '--want-key', '--want-msg'):
            {'--want-v': want_v, '--want-key': want_key, '--want-msg': want_msg}[a[0]].append(a[1])
            a = a[2:]
        else:
            files.append(a.pop(0))
    lines = []
    for f in files:
        with open(f, encoding='utf-8', errors='strict') as fh:
            lines += fh.read().splitlines()
    n = pairs = 0
    sevs, vs, keys, msgs = {}, set(), set(), set()
    try:
        for sev, msg, kv in (parse_text if fmt == 'text' else parse_json)(lines):
            n += 1
            pairs += any(k != 'v' for k in kv)
            sevs[sev] = sevs.get(sev, 0) + 1
            keys |= set(kv)
            msgs.add(msg.decode('utf-8', 'replace'))
            if fmt == 'json' and kv.get('v') is not None:
                vs.add(str(kv['v']))
    except ValueError as e:
        print('klogparse: %s' % e)
        return 1
    print('klogparse %s: %d lines, %d with pairs, severities %s, v %s' %
          (fmt, n, pairs, ' '.join('%s=%d' % x for x in sorted(sevs.items())), ','.join(sorted(vs))))
    bad = [('v', x) for x in want_v if x not in vs] + [('key', x) for x in want_key if x not in keys] + \
        [('msg', x) for x in want_msg if x not in msgs]
    for what, x in bad:
        print('klogparse: no line with %s %s' % (what, x))
    return 0 if n and not bad else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
