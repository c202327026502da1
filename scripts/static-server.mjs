// A static file server for build/site, bound to 127.0.0.1 only. Used by `scripts/serve.sh` and the browser tests.
import http from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf', '.md': 'text/markdown; charset=utf-8',
  '.ico': 'image/x-icon', '.txt': 'text/plain; charset=utf-8',
};

/** Serves `dir` on 127.0.0.1:`port` (0 = any free port); resolves to { url, port, close() }. */
export function startServer(dir, port = 0) {
  const root = path.resolve(dir);
  const server = http.createServer((request, response) => {
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(request.url, 'http://127.0.0.1').pathname);
    } catch {
      response.writeHead(400).end('bad request');
      return;
    }
    let file = path.join(root, pathname);
    if (!file.startsWith(root)) { response.writeHead(403).end('forbidden'); return; }
    try {
      if (statSync(file).isDirectory()) file = path.join(file, 'index.html');
      const size = statSync(file).size;
      response.writeHead(200, {
        'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'Content-Length': size,
        'Cache-Control': 'no-cache',
        // Widgets embed in course pages on other origins: let them load the modules and the wasm.
        'Access-Control-Allow-Origin': '*',
      });
      createReadStream(file).pipe(response);
    } catch {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const actual = server.address().port;
      resolve({ url: `http://127.0.0.1:${actual}/`, port: actual, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

// `node scripts/static-server.mjs DIR [--port N]`
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const dir = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--port') ?? 'build/site';
  const portIndex = args.indexOf('--port');
  const port = portIndex >= 0 ? Number(args[portIndex + 1]) : 8000;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be a whole number in [0, 65535], got ${args[portIndex + 1]}`);
    process.exit(2);
  }
  const { url } = await startServer(dir, port);
  console.log(`tally explainer: ${url}  (Ctrl-C to stop)`);
}
