// The static file server for build/site, bound to 127.0.0.1 only. Used by `scripts/serve.sh` and the browser tests.
//
// This module reads each request's path once (requestPath), resolves it to one real path inside the folder (no "."
// or ".." segments, no dotfiles, no symlink out of the folder, only regular files and folders), then opens that
// file once, with O_NOFOLLOW | O_NONBLOCK, and checks what it opened: fstat says a regular file and the
// descriptor's own path (/proc/self/fd/N on Linux) is still inside the folder and no dotfile. Everything sent comes
// from that descriptor; nothing is opened again by name, so a path swapped for a symlink (or a FIFO) between the
// check and the open is never served. Only GET and HEAD; Range, ETag/Last-Modified and 304/412/416 as `send` (the
// Express project's file sender, which serve-static wraps) answers them; and every response, errors, redirects and
// node's own answers (400 without Host, 417, 431, CONNECT's 405) included, carries the headers below. Full responses
// of compressible files are compressed (brotli or gzip, as the browser accepts) once per file version and kept
// (keyed by path, mtime, size and encoding); a Range request is answered from the file, uncompressed (identity 206),
// so the bytes it names are the file's. Caching is cacheControlFor's. Started as root from the command line, the
// server drops to user nobody (65534) once it listens, and says so (or why it could not).
import http from 'node:http';
import { constants as FS, promises as fsp, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { PAGE_CSP } from '../build/csp.mjs';

/** Request headers up to this size are accepted (node's default is 16 KiB); web/state.js keeps URLs far below. */
export const MAX_HEADER_BYTES = 64 * 1024;

/** Parses a --port value: decimal digits only, 1 to 65535. Returns the number or throws with the reason. */
export function parsePort(text) {
  if (typeof text !== 'string' || !/^[0-9]{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535)
    throw new Error(`--port must be a whole decimal number in [1, 65535], got ${JSON.stringify(text ?? '')}`);
  return Number(text);
}

const BASE_HEADERS = {
  // Widgets embed in course pages on other origins: let them load the modules, the wasm and gpu-report.json.
  'Access-Control-Allow-Origin': '*',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-cache',
};

/** How long a browser may keep a file without asking again, in seconds: KaTeX's fonts change only with KaTeX. */
export const FONT_MAX_AGE = 7 * 24 * 3600;

/**
 * The Cache-Control of a served file. The page, its modules and the engine keep their names across builds (no
 * content hash), so the browser revalidates them on each load (ETag and Last-Modified, answered 304 when unchanged)
 * and never pairs a new tally.js with an old tally.wasm; the vendored fonts are kept a week.
 */
export function cacheControlFor(filePath) {
  return /[\\/]vendor[\\/][^\\/]+[\\/]fonts[\\/][^\\/]+\.(woff2?|ttf)$/.test(filePath)
    ? `public, max-age=${FONT_MAX_AGE}`
    : 'no-cache';
}

/** True when `target` is `root` or inside it. Both are real paths. */
function inside(root, target) {
  return target === root || target.startsWith(root + path.sep);
}

/** The real path of `file`, or null when it does not exist (answered 404). */
function realpathOrNull(file) {
  try {
    return realpathSync(file);
  } catch {
    return null;
  }
}

/**
 * The one reading of a request target that every check here and the file lookup share: the origin-form path
 * (it must start with "/"), cut at "?", percent-decoded once, with repeated slashes collapsed. Returns
 * { path, query, segments } or null for a target tally never serves: not origin-form, undecodable, a NUL or
 * backslash, or a "." or ".." segment (refused rather than resolved). Its segments are what openServed resolves
 * and opens, so "//etclink/passwd" can never be read as a host name by one parser and as a path by another.
 */
export function requestPath(target) {
  if (typeof target !== 'string' || !target.startsWith('/')) return null;
  const cut = target.search(/[?#]/);
  const raw = cut < 0 ? target : target.slice(0, cut);
  const query = cut < 0 || target[cut] === '#' ? '' : target.slice(cut).split('#')[0];
  let decoded;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (/[\0\\]/.test(decoded)) return null;
  const segments = decoded.split('/').filter((part) => part !== '');
  if (segments.some((part) => part === '.' || part === '..')) return null;
  const trailing = decoded.endsWith('/') && segments.length > 0 ? '/' : '';
  return { path: `/${segments.join('/')}${trailing}`, query, segments };
}

/** `requestPath`'s path, percent-encoded again segment by segment (a redirect's Location). */
function encodePath(decodedPath) {
  return decodedPath.split('/').map(encodeURIComponent).join('/');
}

/** True when `real` (a real path) is inside `realRoot` and no part of it below the root starts with ".". */
function servable(realRoot, real) {
  if (real === null || !inside(realRoot, real)) return false;
  return !path
    .relative(realRoot, real)
    .split(path.sep)
    .some((part) => part.startsWith('.'));
}

/** How a served file is opened: never through a final symlink, never blocking on a FIFO. */
export const OPEN_FLAGS = FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK;

/**
 * The real path of what the open descriptor `handle` is, or null: on Linux the kernel's own name for it
 * (/proc/self/fd/N, resolved; a deleted file resolves to nothing); elsewhere `expected` when it names the same
 * file (device and inode) as the descriptor.
 */
async function descriptorPath(handle, expected) {
  try {
    if (process.platform === 'linux') return await fsp.realpath(`/proc/self/fd/${handle.fd}`);
    const [opened, named] = [await handle.stat(), await fsp.lstat(expected)];
    return opened.dev === named.dev && opened.ino === named.ino ? expected : null;
  } catch {
    return null;
  }
}

/**
 * Opens what `segments` names inside `realRoot`, once, and checks what was opened. Resolves to
 * { handle, stat, file } (an open FileHandle on a regular file, its fstat, its real path), { redirect: true } for a
 * folder asked for without its "/", { status: 500 } for a file that exists but cannot be read, or null (404).
 * `beforeOpen(file)`, for tests, runs between the check and the open.
 */
async function openServed(realRoot, segments, wantsFolder, beforeOpen) {
  // Dotfiles and dot-folders, whatever a link would resolve them to.
  if (segments.some((part) => part.startsWith('.'))) return null;
  let file = realpathOrNull(path.join(realRoot, ...segments));
  if (!servable(realRoot, file)) return null;
  let kind;
  try {
    kind = statSync(file);
  } catch {
    return null;
  }
  if (kind.isDirectory()) {
    if (!wantsFolder) return { redirect: true };
    // A folder is served through its index.html, which may itself be a link out, a dotfile's link or a FIFO.
    file = realpathOrNull(path.join(file, 'index.html'));
    if (!servable(realRoot, file)) return null;
  } else if (wantsFolder || !kind.isFile()) {
    // "/file/", or a FIFO or device (not even opened: opening some devices does something).
    return null;
  }
  await beforeOpen?.(file);
  let handle;
  try {
    handle = await fsp.open(file, OPEN_FLAGS);
  } catch (error) {
    // ELOOP: the checked path became a symlink; ENOENT: it went away.
    return error.code === 'EACCES' || error.code === 'EPERM' ? { status: 500 } : null;
  }
  try {
    const stat = await handle.stat();
    const opened = await descriptorPath(handle, file);
    // Only a regular file (not a folder named index.html, not a FIFO swapped in), still inside the folder.
    if (stat.isFile() && servable(realRoot, opened)) return { handle, stat, file: opened };
  } catch {
    // fall through: not served
  }
  await handle.close().catch(() => {});
  return null;
}

/** Content types by extension (send's, from mime-db, for the files a site holds); anything else is octet-stream. */
const TYPES = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  cjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  map: 'application/json; charset=utf-8',
  webmanifest: 'application/manifest+json; charset=utf-8',
  wasm: 'application/wasm',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/vnd.microsoft.icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  pdf: 'application/pdf',
};

/** The Content-Type of `file`. */
export function contentType(file) {
  return TYPES[path.extname(file).slice(1).toLowerCase()] ?? 'application/octet-stream';
}

/** Whether a type is worth compressing (text, JSON, JavaScript, XML, SVG, wasm, uncompressed fonts). */
function compressible(type) {
  return /^(text\/|application\/(json|manifest\+json|xml|wasm)|image\/(svg\+xml|vnd\.microsoft\.icon)|font\/(ttf|otf))/.test(
    type,
  );
}

/** Files below this size go out as they are (the compression middleware's threshold). */
export const COMPRESS_MIN_BYTES = 1024;

/** "br", "gzip" or null: the encoding to send for an Accept-Encoding header (brotli preferred at equal q). */
export function negotiateEncoding(accept) {
  if (typeof accept !== 'string' || accept === '') return null;
  const q = new Map();
  for (const item of accept.split(',')) {
    const [name, ...params] = item.trim().toLowerCase().split(';');
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const weight = (name) => q.get(name) ?? q.get('*') ?? 0;
  const [br, gzip] = [weight('br'), weight('gzip')];
  if (br > 0 && br >= gzip) return 'br';
  return gzip > 0 ? 'gzip' : null;
}

// Brotli quality 5, not zlib's 11 or the old middleware's 4: tally.wasm goes from 329 to 296 KiB for about 70 ms,
// now spent once per build of the file rather than per request.
const COMPRESSORS = {
  br: (bytes) =>
    promisify(zlib.brotliCompress)(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  gzip: (bytes) => promisify(zlib.gzip)(bytes),
};

/** Compressed files kept, at most this many bytes in all (least recently used dropped first). */
export const COMPRESSED_CACHE_BYTES = 64 << 20;

/** An HTTP date header's time in milliseconds, or NaN. */
const parseDate = (text) => (typeof text === 'string' ? Date.parse(text) : NaN);

/** The entity tags of an If-Match / If-None-Match list, weak prefixes dropped (weak comparison). */
const tagList = (text) => text.split(',').map((tag) => tag.trim().replace(/^W\//, ''));

/**
 * A single byte range of a `size`-byte file, as send reads the Range header: { start, end } (inclusive),
 * 'unsatisfiable', or null when the header is absent, malformed or asks for several ranges (then the whole file
 * is sent).
 */
export function parseRange(header, size) {
  if (typeof header !== 'string') return null;
  const match = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/.exec(header);
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start;
  let end;
  if (match[1] === '') {
    // "-N": the last N bytes.
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
    if (match[2] !== '' && Number(match[2]) < start) return null;
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/**
 * Serves `dir` on 127.0.0.1:`port` (0 = any free port); resolves to { url, port, root, compressions, close() }.
 * Rejects when `dir` is not an existing folder. `csp`: the Content-Security-Policy header (tally's page
 * policy by default; null for none, as the browser tests' stand-in host pages bring their own). `beforeOpen(file)`
 * (tests only) runs after a request's path is checked and before the file is opened. `compressions` counts the
 * files compressed so far (each version of a file once per encoding).
 */
export async function startServer(dir, port = 0, { csp = PAGE_CSP, beforeOpen = null } = {}) {
  const COMMON_HEADERS = csp ? { ...BASE_HEADERS, 'Content-Security-Policy': csp } : { ...BASE_HEADERS };
  let realRoot;
  try {
    realRoot = realpathSync(path.resolve(dir));
    if (!statSync(realRoot).isDirectory()) throw new Error('not a folder');
  } catch (error) {
    throw new Error(
      `cannot serve ${dir}: ${error.code === 'ENOENT' ? 'no such folder' : error.message} (build it first: bash scripts/serve.sh builds build/site)`,
    );
  }

  // Compressed files: `${encoding}\0${path}` -> { mtimeMs, size, body }, in least-recently-used order.
  const compressedCache = new Map();
  let cachedBytes = 0;
  let compressions = 0;
  const inFlight = new Map(); // the same key plus mtime and size -> Promise<Buffer | null>

  /** The file's bytes compressed with `encoding`, prepared once per version; null when the file changed meanwhile. */
  async function compressedBody({ handle, stat, file }, encoding) {
    const key = `${encoding}\0${file}`;
    const hit = compressedCache.get(key);
    if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) {
      compressedCache.delete(key);
      compressedCache.set(key, hit);
      return hit.body;
    }
    const version = `${key}\0${stat.mtimeMs}\0${stat.size}`;
    let job = inFlight.get(version);
    if (!job) {
      job = (async () => {
        const bytes = await handle.readFile();
        if (bytes.length !== stat.size) return null; // rewritten while read: sent as it is, not kept
        const body = await COMPRESSORS[encoding](bytes);
        compressions += 1;
        const old = compressedCache.get(key);
        if (old) cachedBytes -= old.body.length;
        compressedCache.delete(key);
        if (body.length <= COMPRESSED_CACHE_BYTES) {
          compressedCache.set(key, { mtimeMs: stat.mtimeMs, size: stat.size, body });
          cachedBytes += body.length;
          for (const [oldest, entry] of compressedCache) {
            if (cachedBytes <= COMPRESSED_CACHE_BYTES) break;
            compressedCache.delete(oldest);
            cachedBytes -= entry.body.length;
          }
        }
        return body;
      })();
      inFlight.set(version, job);
      job.then(
        () => inFlight.delete(version),
        () => inFlight.delete(version),
      );
    }
    return job;
  }

  const server = http.createServer(
    // Node would answer a request without Host itself, without the headers below: it is answered in handle.
    { maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: false },
    (request, response) => {
      handle(request, response).catch(() => {
        if (!response.headersSent) answerWith(request, response, 500, 'cannot read this file');
        else response.destroy();
      });
    },
  );

  function answerWith(request, response, status, text, extra = {}) {
    if (response.headersSent) {
      response.destroy();
      return;
    }
    for (const name of response.getHeaderNames()) response.removeHeader(name);
    response.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', ...extra });
    response.end(request.method === 'HEAD' ? undefined : `${text}\n`);
  }

  async function handle(request, response) {
    const answer = (status, text, extra) => answerWith(request, response, status, text, extra);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      answer(405, 'method not allowed', { Allow: 'GET, HEAD' });
      return;
    }
    if (request.httpVersion === '1.1' && request.headers.host === undefined) {
      answer(400, 'bad request: no Host header', { Connection: 'close' });
      return;
    }
    const target = requestPath(request.url);
    if (target === null) {
      answer(400, 'bad request');
      return;
    }
    const wantsFolder = target.path.endsWith('/');
    const opened = await openServed(realRoot, target.segments, wantsFolder, beforeOpen);
    if (opened === null) {
      answer(404, 'not found');
      return;
    }
    if (opened.redirect) {
      answer(301, 'moved', { Location: `${encodePath(target.path)}/${target.query}` });
      return;
    }
    if (opened.status) {
      answer(opened.status, 'cannot read this file');
      return;
    }
    let streaming = false;
    try {
      streaming = await sendOpened(request, response, opened);
    } finally {
      if (!streaming) await opened.handle.close().catch(() => {});
    }
  }

  /** Answers from the open file; true when a stream now owns (and will close) the handle. */
  async function sendOpened(request, response, opened) {
    const { handle, stat, file } = opened;
    const type = contentType(file);
    const squeezable = compressible(type) && stat.size >= COMPRESS_MIN_BYTES;
    const headers = {
      ...COMMON_HEADERS,
      'Cache-Control': cacheControlFor(file),
      'Accept-Ranges': 'bytes',
      'Last-Modified': stat.mtime.toUTCString(),
      ETag: `W/"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`,
      ...(squeezable ? { Vary: 'Accept-Encoding' } : {}),
    };
    const etag = headers.ETag.slice(2);
    const modified = Math.floor(stat.mtimeMs / 1000) * 1000;
    const h = request.headers;
    // Preconditions, as send checks them: If-Match, else If-Unmodified-Since.
    if (
      h['if-match']
        ? h['if-match'] !== '*' && !tagList(h['if-match']).includes(etag)
        : modified > parseDate(h['if-unmodified-since'])
    ) {
      answerWith(request, response, 412, 'precondition failed');
      return false;
    }
    // Unchanged since the browser's copy: If-None-Match, else If-Modified-Since.
    const noneMatch = h['if-none-match'];
    if (
      noneMatch
        ? noneMatch.trim() === '*' || tagList(noneMatch).includes(etag)
        : modified <= parseDate(h['if-modified-since'])
    ) {
      response.writeHead(304, headers);
      response.end();
      return false;
    }
    // A Range (when If-Range still names this version) is answered from the file: no compression, so the bytes
    // it names are the file's (expressjs/compression#185).
    const ifRange = h['if-range'];
    const rangeFresh =
      !ifRange || (ifRange.includes('"') ? ifRange.trim() === headers.ETag : modified <= parseDate(ifRange));
    const range = rangeFresh ? parseRange(h.range, stat.size) : null;
    if (range === 'unsatisfiable') {
      answerWith(request, response, 416, 'range not satisfiable', { 'Content-Range': `bytes */${stat.size}` });
      return false;
    }
    const encoding = range === null && squeezable ? negotiateEncoding(h['accept-encoding']) : null;
    if (encoding) {
      const body = await compressedBody(opened, encoding);
      if (body !== null) {
        response.writeHead(200, {
          ...headers,
          'Content-Type': type,
          'Content-Encoding': encoding,
          'Content-Length': body.length,
        });
        response.end(request.method === 'HEAD' ? undefined : body);
        return false;
      }
    }
    const start = range ? range.start : 0;
    const end = range ? range.end : stat.size - 1;
    response.writeHead(range ? 206 : 200, {
      ...headers,
      'Content-Type': type,
      'Content-Length': end - start + 1,
      ...(range ? { 'Content-Range': `bytes ${start}-${end}/${stat.size}` } : {}),
    });
    if (request.method === 'HEAD' || end < start) {
      response.end();
      return false;
    }
    // The file's bytes from the descriptor checked above; a file truncated mid-stream ends the response early.
    pipeline(handle.createReadStream({ start, end, autoClose: true }), response, () => {});
    return true;
  }

  // Malformed requests, oversized headers, unknown Expect values and CONNECT never reach the handler; their answers
  // carry the common headers too.
  const rawHeaders = Object.entries({ ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const rawAnswer = (status, body, extra = '') =>
    `HTTP/1.1 ${status}\r\n${rawHeaders}${extra}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  server.on('clientError', (error, socket) => {
    // A client that hangs up mid-response must not take the server down.
    if (!socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const status =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? ['431 Request Header Fields Too Large', 'request headers too large\n']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? ['408 Request Timeout', 'request timeout\n']
          : ['400 Bad Request', 'bad request\n'];
    socket.end(rawAnswer(...status));
  });
  // "Expect: 100-continue" is answered by node (an interim 100); any other expectation is refused here.
  server.on('checkExpectation', (request, response) =>
    answerWith(request, response, 417, 'expectation failed', { Connection: 'close' }),
  );
  // CONNECT (a proxy tunnel): node hands over the socket, or drops it unanswered when nothing listens.
  server.on('connect', (request, socket) => {
    socket.on('error', () => socket.destroy());
    socket.end(rawAnswer('405 Method Not Allowed', 'method not allowed\n', 'Allow: GET, HEAD\r\n'));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const actual = server.address().port;
      resolve({
        url: `http://127.0.0.1:${actual}/`,
        port: actual,
        root: realRoot,
        get compressions() {
          return compressions;
        },
        close: () =>
          new Promise((r) => {
            server.closeAllConnections?.();
            server.close(r);
          }),
      });
    });
  });
}

/** Parses `DIR [--port N]`; returns { dir, port } or throws with a usage message. */
export function parseArgs(args) {
  let dir = null;
  let port = 8000;
  let portSeen = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--port' || arg.startsWith('--port=')) {
      if (portSeen) throw new Error('--port given twice');
      portSeen = true;
      const value = arg === '--port' ? args[++i] : arg.slice('--port='.length);
      if (value === undefined) throw new Error('--port needs a value');
      port = parsePort(value);
    } else if (arg.startsWith('-')) {
      throw new Error(`unknown option ${arg}`);
    } else if (dir === null) {
      dir = arg;
    } else {
      throw new Error(`one folder only, got ${dir} and ${arg}`);
    }
  }
  return { dir: dir ?? 'build/site', port };
}

/** The user a server started as root switches to once it listens: nobody. */
export const UNPRIVILEGED = { name: 'nobody', uid: 65534, gid: 65534 };

/**
 * When this process runs as root: checks that user nobody can read `realRoot` (a checkout under a private folder,
 * /root or a 0700 temporary folder, is out of its reach, and every request would then fail), then switches to it for
 * good (no supplementary groups, gid and uid 65534). Returns the line to print: that it did, or why it could not;
 * null when not root.
 */
export function dropPrivileges(realRoot, { uid = UNPRIVILEGED.uid, gid = UNPRIVILEGED.gid } = {}) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const who = `user ${UNPRIVILEGED.name} (uid ${uid}, gid ${gid})`;
  if (typeof process.setuid !== 'function' || typeof process.seteuid !== 'function')
    return `static-server: still running as root: this platform cannot switch to ${who}`;
  const groups = process.getgroups();
  try {
    // Try it reversibly first (effective ids only), without root's groups.
    process.setgroups([]);
    process.setegid(gid);
    process.seteuid(uid);
    try {
      readdirSync(realRoot);
    } finally {
      process.seteuid(0);
      process.setegid(0);
    }
  } catch (error) {
    process.setgroups(groups);
    return `static-server: still running as root: ${who} cannot read ${realRoot} (${error.code ?? error.message}; a parent folder is private)`;
  }
  try {
    process.setgid(gid);
    process.setuid(uid);
  } catch (error) {
    if (process.getuid() === 0) {
      process.setgroups(groups);
      return `static-server: still running as root: cannot switch to ${who}: ${error.message}`;
    }
  }
  return `static-server: started as root, now running as ${who}`;
}

// `node scripts/dev/static-server.mjs DIR [--port N]`
if (import.meta.url === `file://${process.argv[1]}`) {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`static-server: ${error.message} (usage: node scripts/dev/static-server.mjs [DIR] [--port N])`);
    process.exit(2);
  }
  let server;
  try {
    server = await startServer(options.dir, options.port);
  } catch (error) {
    console.error(`static-server: ${error.code === 'EADDRINUSE' ? `port ${options.port} is in use` : error.message}`);
    process.exit(2);
  }
  // After listening: a port below 1024 needs root to bind, nothing after that does.
  const dropped = dropPrivileges(server.root);
  if (dropped) console.log(dropped);
  console.log(`tally explainer: ${server.url}  (Ctrl-C to stop)`);
}
