// The static file server for build/site, bound to 127.0.0.1 only. Used by `scripts/serve.sh` and the browser tests.
//
// File serving is serve-static (the Express project's static middleware, on top of `send`): it decodes and
// normalises paths and refuses "..", hides dotfiles, answers only GET and HEAD (405 with Allow otherwise),
// handles Range/ETag, and reports stream errors as events instead of crashing. This module adds what it
// does not do: symlinks may not lead out of the folder, and every response carries the headers below.
import http from 'node:http';
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import serveStatic from 'serve-static';
import { PAGE_CSP } from './csp.mjs';

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
 * Whether the URL path stays inside `realRoot` after every symlink is resolved, and reaches no dotfile there.
 * Paths that do not decode are left to serve-static (it answers 400).
 */
function staysInside(realRoot, urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return true;
  }
  if (decoded.includes('\0')) return false;
  const candidate = path.join(realRoot, path.normalize(`/${decoded}`));
  const candidates = [candidate];
  // A directory is served through its index.html, which may itself be a link.
  try {
    if (statSync(candidate).isDirectory()) candidates.push(path.join(candidate, 'index.html'));
  } catch {
    /* missing: 404 */
  }
  for (const file of candidates) {
    const real = realpathOrNull(file);
    if (real === null) continue;
    if (!inside(realRoot, real)) return false;
    // Only regular files and folders: a FIFO or device would block or stream forever.
    const kind = statSync(real);
    if (!kind.isFile() && !kind.isDirectory()) return false;
    if (
      path
        .relative(realRoot, real)
        .split(path.sep)
        .some((part) => part.startsWith('.'))
    )
      return false;
  }
  return true;
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
    redirect: true,
    setHeaders: (response) => {
      for (const [name, value] of Object.entries(COMMON_HEADERS)) response.setHeader(name, value);
    },
  });

  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (request, response) => {
    const fail = (status, text) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      for (const name of response.getHeaderNames()) response.removeHeader(name);
      const headers = { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' };
      if (status === 405) headers.Allow = 'GET, HEAD';
      response.writeHead(status, headers);
      response.end(request.method === 'HEAD' ? undefined : `${text}\n`);
    };
    try {
      if (request.method === 'GET' || request.method === 'HEAD') {
        const urlPath = new URL(request.url, 'http://127.0.0.1').pathname;
        if (!staysInside(realRoot, urlPath)) {
          fail(404, 'not found');
          return;
        }
      }
      files(request, response, (error) => {
        const status =
          Number.isInteger(error?.statusCode) && error.statusCode >= 400 && error.statusCode < 600
            ? error.statusCode
            : 500;
        // Unreadable file (EACCES) and similar: send says 500; a reader only needs to know it is not served.
        fail(
          status,
          status === 404
            ? 'not found'
            : status === 405
              ? 'method not allowed'
              : status >= 500
                ? 'cannot read this file'
                : 'bad request',
        );
      });
    } catch {
      fail(400, 'bad request');
    }
  });
  // A client that hangs up mid-response must not take the server down.
  server.on('clientError', (error, socket) => {
    if (socket.writable && !socket.headersSent)
      socket.end(
        `HTTP/1.1 ${error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\nConnection: close\r\n\r\n`,
      );
    else socket.destroy();
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

// `node scripts/static-server.mjs DIR [--port N]`
if (import.meta.url === `file://${process.argv[1]}`) {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`static-server: ${error.message} (usage: node scripts/static-server.mjs [DIR] [--port N])`);
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
