"""sitelib - what the sample-site generator, server and checker share.

The sample site (gensite.py), its server (serve.py) and the crawl checker
(check_crawl.py) must agree with the crawler on two questions, and this
module answers both, in plain Python, for the URLs the site contains:

1. Which spellings name the same URL?  ``normalize(href, base)`` resolves an
   href against its page (RFC 3986 section 5.2) and applies the default
   normalization policy of docs/DESIGN.md 3.1:

     - trim leading/trailing C0 controls and spaces, drop TAB CR LF anywhere;
     - resolve against the base (``http:g`` against an http base is relative);
     - lowercase scheme and host, strip one trailing dot from the host,
       decode escapes in the host;
     - drop the default port and an empty port; empty path becomes ``/``;
     - percent-escapes: hex digits uppercase; escapes of unreserved characters
       (A-Z a-z 0-9 - . _ ~) decoded; reserved ones (%2F %3F %26 ...) kept;
       a ``%`` without two hex digits becomes ``%25``;
     - remove dot segments, also spelled ``%2E``;
     - percent-encode what may not appear raw (space, controls, ``"<>^{|}```
       and bytes >= 0x80 as UTF-8); a backslash in the path is ``/``;
     - drop the fragment and an empty ``?``.

   Never: strip ``www.``, drop a trailing ``/``, drop ``index.html``, lowercase
   the path, sort or drop query parameters.  The generator uses this to know
   which spellings it wrote are the same page; the server uses it to map a
   request to a resource (as a real server would, except that it keeps
   ``%2F`` distinct from ``/``); the checker uses it to catch a page fetched
   twice under two spellings.

2. Which URLs may a crawler fetch?  ``Robots`` is a small RFC 9309 matcher:
   groups selected by product token (case-insensitive; all matching groups
   merge; else ``*``; else allow all), longest match wins, allow wins a tie,
   ``*`` and ``$`` in patterns, patterns and paths compared after the same
   percent-escape normalization, ``/robots.txt`` always allowed.

Standard library only (Python 3.11).  Nothing here opens a socket.
"""

import functools
import json
import re

UNRESERVED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Bytes that docs/DESIGN.md 3.1 rule 10 says must be percent-encoded.
MUST_ENCODE = frozenset(b' "<>^{|}`') | frozenset(range(0x00, 0x21)) | \
    frozenset(range(0x7F, 0x100))
HEX = b"0123456789ABCDEFabcdef"
DEFAULT_PORTS = {"http": 80, "https": 443}
PORT_PLACEHOLDER = "{PORT}"

_C0_SPACE = "".join(chr(c) for c in range(0x21))
_NEEDS_WORK = re.compile('[\x00-\x20"<>^{|}`%\x7f-\U0010ffff]')
_URI_RE = re.compile(
    r"^(?:([A-Za-z][A-Za-z0-9+.\-]*):)?(?://([^/?#]*))?([^?#]*)"
    r"(?:\?([^#]*))?(?:#(.*))?$", re.S)


class URLError(ValueError):
    """The href cannot become a fetch URL (the reason is the message)."""


def fix_escapes(text):
    """Percent-escape normalization of a path or query (rules 9 and 10).

    Uppercase hex, decode unreserved escapes, keep reserved escapes,
    ``%`` without two hex digits -> ``%25``, encode bytes that may not
    appear raw.  Idempotent: fix_escapes(fix_escapes(x)) == fix_escapes(x).
    """
    if not _NEEDS_WORK.search(text):
        return text  # the common case: nothing to change
    raw = text.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == 0x25:  # '%'
            if i + 2 < n and raw[i + 1] in HEX and raw[i + 2] in HEX:
                v = int(raw[i + 1:i + 3], 16)
                if v in UNRESERVED:
                    out.append(v)
                else:
                    out += b"%%%02X" % v
                i += 3
                continue
            out += b"%25"
        elif c in MUST_ENCODE:
            out += b"%%%02X" % c
        else:
            out.append(c)
        i += 1
    return out.decode("ascii")


def remove_dot_segments(path):
    """RFC 3986 section 5.2.4, on an already escape-normalized path."""
    out = []
    i = path
    while i:
        if i.startswith("../"):
            i = i[3:]
        elif i.startswith("./"):
            i = i[2:]
        elif i.startswith("/./"):
            i = i[2:]
        elif i == "/.":
            i = "/"
        elif i.startswith("/../"):
            i = i[3:]
            if out:
                out.pop()
        elif i == "/..":
            i = "/"
            if out:
                out.pop()
        elif i in (".", ".."):
            i = ""
        else:
            j = i.find("/", 1)
            if j < 0:
                j = len(i)
            out.append(i[:j])
            i = i[j:]
    return "".join(out)


def _merge(base_auth, base_path, ref_path):
    if base_auth is not None and base_path == "":
        return "/" + ref_path
    k = base_path.rfind("/")
    return base_path[:k + 1] + ref_path


def _split(url):
    m = _URI_RE.match(url)
    if not m:  # cannot happen: every part is optional
        raise URLError("unparsable")
    return m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)


def _norm_host(auth):
    """Authority -> (host, port) by rules 3, 6, 12; userinfo is kept out."""
    if "@" in auth:
        raise URLError("userinfo not used on this site")
    host, port = auth.rsplit(":", 1) if ":" in auth else (auth, "")
    host = fix_escapes(host)
    host = re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), host)
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]
    if not host or not re.fullmatch(r"[a-z0-9.\-]+", host):
        raise URLError("bad host")
    if port and not port.isdigit():
        raise URLError("bad port")
    return host, (int(port) if port else None)


@functools.lru_cache(maxsize=1 << 16)
def normalize(href, base=None):
    """The canonical fetch URL of ``href`` found on a page at ``base``.

    ``base`` must itself be canonical (or None for an absolute href).
    Raises URLError for what a crawler must not fetch (other schemes, ...).
    """
    href = href.strip(_C0_SPACE)
    href = href.replace("\t", "").replace("\r", "").replace("\n", "")
    if not href and base is None:
        raise URLError("empty")
    scheme, auth, path, query, _frag = _split(href)
    if scheme is not None:
        scheme = scheme.lower()
    if base is not None:
        bs, ba, bp, bq, _ = _split(base)
        if scheme == bs and auth is None:
            scheme = None  # 'http:g' against an http base is relative
    if scheme is not None and scheme not in ("http", "https"):
        raise URLError("unsupported scheme " + scheme)
    path = fix_escapes(path.replace("\\", "/"))
    query = fix_escapes(query) if query is not None else None
    # RFC 3986 5.2.2 (non-strict)
    if scheme is not None:
        t_auth, t_path, t_query = auth, remove_dot_segments(path), query
        t_scheme = scheme
    else:
        if base is None:
            raise URLError("relative reference without a base")
        t_scheme = bs
        if auth is not None:
            t_auth, t_path, t_query = auth, remove_dot_segments(path), query
        else:
            t_auth = ba
            if path == "":
                t_path = bp
                t_query = query if query is not None else bq
            else:
                if path.startswith("/"):
                    t_path = remove_dot_segments(path)
                else:
                    t_path = remove_dot_segments(_merge(ba, bp, path))
                t_query = query
    if t_auth is None:
        raise URLError("no host")
    host, port = _norm_host(t_auth)
    if port == DEFAULT_PORTS[t_scheme]:
        port = None
    if t_path == "":
        t_path = "/"
    url = "%s://%s%s%s" % (t_scheme, host,
                           ":%d" % port if port is not None else "", t_path)
    if t_query:  # an empty '?' is dropped
        url += "?" + t_query
    return url


@functools.lru_cache(maxsize=1 << 16)
def split_url(url):
    """Canonical URL -> (scheme, host, port or None, path?query)."""
    scheme, auth, path, query, _ = _split(url)
    host, port = _norm_host(auth)
    return scheme, host, port, path + ("?" + query if query else "")


def origin_key(url):
    """host:port of a canonical URL (the per-host queue key, scheme aside)."""
    _, host, port, _ = split_url(url)
    return host if port is None else "%s:%d" % (host, port)


def normalize_target(raw_target):
    """Canonical path?query of a request target as sent by a client."""
    return split_url(normalize(raw_target, "http://h/"))[3]


def with_port(text, port):
    """Substitute the port placeholder of manifest/page text."""
    return text.replace(PORT_PLACEHOLDER, str(port))


# -- robots.txt (RFC 9309) ----------------------------------------------------

class Robots:
    """A parsed robots.txt; ``allowed(agent_token, path)``."""

    def __init__(self, text):
        self.groups = []  # [(set(agents), [(allow, pattern)], crawl_delay)]
        self.sitemaps = []
        self._cache = {}
        agents, rules, delay, in_rules = set(), [], None, False
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if ":" not in line:
                continue
            key, value = line.split(":", 1)
            key, value = key.strip().lower(), value.strip()
            if key == "user-agent":
                if in_rules:
                    self.groups.append((agents, rules, delay))
                    agents, rules, delay, in_rules = set(), [], None, False
                agents.add(value.lower())
            elif key in ("allow", "disallow"):
                in_rules = True
                if value:
                    rules.append((key == "allow", fix_escapes(value)))
            elif key == "crawl-delay":
                in_rules = True
                delay = float(value)
            elif key == "sitemap":
                self.sitemaps.append(value)
        if agents:
            self.groups.append((agents, rules, delay))

    def _group(self, token):
        token = token.lower()
        hit = [g for g in self.groups if token in g[0]]
        if not hit:
            hit = [g for g in self.groups if "*" in g[0]]
        rules = [r for g in hit for r in g[1]]
        delays = [g[2] for g in hit if g[2] is not None]
        return rules, (delays[0] if delays else None)

    def crawl_delay(self, token):
        return self._group(token)[1]

    @staticmethod
    def _match(pattern, path):
        anchored = pattern.endswith("$")
        if anchored:
            pattern = pattern[:-1]
        rx = ".*".join(re.escape(p) for p in pattern.split("*"))
        return re.match(rx + ("$" if anchored else ""), path, re.S) is not None

    def rule_for(self, token, path):
        """The deciding (allow, pattern) for path?query, or None."""
        key = (token.lower(), path)
        if key not in self._cache:
            self._cache[key] = self._rule_for(token, path)
        return self._cache[key]

    def _rule_for(self, token, path):
        if path == "/robots.txt":
            return None
        path = fix_escapes(path)
        best = None
        for allow, pattern in self._group(token)[0]:
            if self._match(pattern, path):
                key = (len(pattern), allow)
                if best is None or key > best[0]:
                    best = (key, (allow, pattern))
        return best[1] if best else None

    def allowed(self, token, path):
        rule = self.rule_for(token, path)
        return rule is None or rule[0]


def load_manifest(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
