// The static file server for build/site, bound to 127.0.0.1 only. Used by `scripts/serve.sh` and the browser tests.
//
// File serving is serve-static (the Express project's static middleware, on top of `send`): content types,
// Range/ETag, and stream errors reported as events instead of crashes. This module reads each request's path
// once (requestPath) and hands serve-static exactly the path it checked: no "." or ".." segments, no dotfiles,
// no symlink out of the folder, only regular files and folders; only GET and HEAD; and every response, errors
// and redirects included, carries the headers below. Responses are compressed (brotli or gzip, as the browser
// accepts) by `compression` (the Express project's middleware); caching is cacheControlFor's.
import http from 'node:http';
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import compression from 'compression';
import serveStatic from 'serve-static';
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

/** The real path of `file`, or null when it does not exist (serve-static then answers 404). */
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
 * backslash, or a "." or ".." segment (refused rather than resolved). serve-static is then handed `path`
 * re-encoded, so it looks up exactly the file that was checked: "//etclink/passwd" can no longer be read
 * as a host name by one parser and as a path by another.
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

/** `requestPath`'s path, percent-encoded again segment by segment (what serve-static decodes back). */
function encodePath(decodedPath) {
  return decodedPath.split('/').map(encodeURIComponent).join('/');
}

/** "file", "folder" or null: what `decodedPath` names inside `realRoot`, null when tally must not serve it. */
function servedKind(realRoot, segments) {
  // Dotfiles and dot-folders, whatever a link would resolve them to.
  if (segments.some((part) => part.startsWith('.'))) return null;
  const candidate = path.join(realRoot, ...segments);
  const real = realpathOrNull(candidate);
  if (real === null || !inside(realRoot, real)) return null;
  if (
    path
      .relative(realRoot, real)
      .split(path.sep)
      .some((part) => part.startsWith('.'))
  )
    return null;
  let kind;
  try {
    kind = statSync(real);
  } catch {
    return null;
  }
  // Only regular files and folders: a FIFO or device would block or stream forever.
  if (kind.isFile()) return 'file';
  if (!kind.isDirectory()) return null;
  // A folder is served through its index.html, which may itself be a link out, a dotfile's link or a FIFO.
  const index = realpathOrNull(path.join(real, 'index.html'));
  if (index === null) return 'folder';
  if (
    !inside(realRoot, index) ||
    path
      .relative(realRoot, index)
      .split(path.sep)
      .some((p) => p.startsWith('.'))
  )
    return null;
  try {
    return statSync(index).isFile() || statSync(index).isDirectory() ? 'folder' : null;
  } catch {
    return null;
  }
}

/**
 * Serves `dir` on 127.0.0.1:`port` (0 = any free port); resolves to { url, port, close() }.
 * Rejects when `dir` is not an existing folder. `csp`: the Content-Security-Policy header (tally's page
 * policy by default; null for none, as the browser tests' stand-in host pages bring their own).
 */
export async function startServer(dir, port = 0, { csp = PAGE_CSP } = {}) {
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
  const files = serveStatic(realRoot, {
    dotfiles: 'ignore', // 404, as if absent
    fallthrough: false, // errors (404, 403, 405) come to the handler below instead of a next middleware
    index: ['index.html'],
    redirect: false, // folders without their "/" are redirected below, with the common headers
    setHeaders: (response, filePath) => {
      for (const [name, value] of Object.entries(COMMON_HEADERS)) response.setHeader(name, value);
      response.setHeader('Cache-Control', cacheControlFor(filePath));
    },
  });
  // Brotli or gzip by the request's Accept-Encoding, for compressible types above 1 KiB (the wasm included). Brotli
  // quality 5, not the middleware's 4: tally.wasm goes from 329 to 296 KiB for about 70 ms more per request.
  const compress = compression({ brotli: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } } });

  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (request, response) =>
    compress(request, response, () => handle(request, response)),
  );
  function handle(request, response) {
    const answer = (status, text, extra = {}) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      for (const name of response.getHeaderNames()) response.removeHeader(name);
      response.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', ...extra });
      response.end(request.method === 'HEAD' ? undefined : `${text}\n`);
    };
    try {
      // serve-static would answer other methods itself, without the common headers.
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        answer(405, 'method not allowed', { Allow: 'GET, HEAD' });
        return;
      }
      const target = requestPath(request.url);
      if (target === null) {
        answer(400, 'bad request');
        return;
      }
      const kind = servedKind(realRoot, target.segments);
      if (kind === null) {
        answer(404, 'not found');
        return;
      }
      if (kind === 'folder' && !target.path.endsWith('/')) {
        answer(301, 'moved', { Location: `${encodePath(target.path)}/${target.query}` });
        return;
      }
      // serve-static looks up exactly the path checked above.
      request.url = `${encodePath(target.path)}${target.query}`;
      files(request, response, (error) => {
        const status =
          Number.isInteger(error?.statusCode) && error.statusCode >= 400 && error.statusCode < 600
            ? error.statusCode
            : 500;
        // Unreadable file (EACCES) and similar: send says 500; a reader only needs to know it is not served.
        answer(status, status === 404 ? 'not found' : status >= 500 ? 'cannot read this file' : 'bad request');
      });
    } catch {
      answer(400, 'bad request');
    }
  }
  // Malformed requests and oversized headers never reach the handler; their answers carry the common headers too.
  const rawHeaders = Object.entries({ ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  server.on('clientError', (error, socket) => {
    // A client that hangs up mid-response must not take the server down.
    if (!socket.writable || socket.headersSent) {
      socket.destroy();
      return;
    }
    const overflow = error.code === 'HPE_HEADER_OVERFLOW';
    const body = overflow ? 'request headers too large\n' : 'bad request\n';
    socket.end(
      `HTTP/1.1 ${overflow ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n${rawHeaders}` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const actual = server.address().port;
      resolve({
        url: `http://127.0.0.1:${actual}/`,
        port: actual,
        root: realRoot,
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

// `node scripts/dev/static-server.mjs DIR [--port N]`
if (import.meta.url === `file://${process.argv[1]}`) {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`static-server: ${error.message} (usage: node scripts/dev/static-server.mjs [DIR] [--port N])`);
    process.exit(2);
  }
  try {
    const { url } = await startServer(options.dir, options.port);
    console.log(`tally explainer: ${url}  (Ctrl-C to stop)`);
  } catch (error) {
    console.error(`static-server: ${error.code === 'EADDRINUSE' ? `port ${options.port} is in use` : error.message}`);
    process.exit(2);
  }
}
