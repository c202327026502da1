// scripts/dev/static-server.mjs: serves only regular files inside its folder (after resolving links), never dotfiles,
// only GET and HEAD, with the headers embedding needs; no request takes it down; strict command line.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  constants as FS,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  renameSync,
  unlinkSync,
} from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startServer,
  parsePort,
  parseArgs,
  requestPath,
  cacheControlFor,
  FONT_MAX_AGE,
  MAX_HEADER_BYTES,
  OPEN_FLAGS,
} from '../../scripts/dev/static-server.mjs';
import { PAGE_CSP } from '../../scripts/build/csp.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const serverScript = path.join(root, 'scripts/dev/static-server.mjs');
const SECRET = 'SECRET-OUTSIDE-THE-SITE';

let base; // temporary folder holding the site and its neighbours
let site; // <base>/site, the served folder
let server;

before(async () => {
  base = mkdtempSync(path.join(os.tmpdir(), 'tally-server-'));
  chmodSync(base, 0o755); // readable by the unprivileged child of the "unreadable file" test
  site = path.join(base, 'site');
  mkdirSync(site);
  // A sibling whose name starts with the root's name: "/site" is a prefix of "/site-secret".
  mkdirSync(path.join(base, 'site-secret'));
  writeFileSync(path.join(base, 'site-secret/secret.txt'), SECRET);
  writeFileSync(path.join(base, 'outside.txt'), SECRET);
  writeFileSync(path.join(site, 'index.html'), '<!doctype html><title>tally</title>');
  writeFileSync(path.join(site, 'app.js'), 'export const x = 1;\n');
  writeFileSync(path.join(site, 'mod.mjs'), 'export const y = 2;\n');
  writeFileSync(path.join(site, 'data.json'), '{"a":1}\n');
  writeFileSync(path.join(site, 'tally.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  writeFileSync(path.join(site, '.env'), SECRET);
  mkdirSync(path.join(site, '.git'));
  writeFileSync(path.join(site, '.git/config'), SECRET);
  mkdirSync(path.join(site, 'sub'));
  writeFileSync(path.join(site, 'sub/.hidden'), SECRET);
  writeFileSync(path.join(site, 'sub/page.txt'), 'a page\n');
  // A folder named index.html, where the server expects a file.
  mkdirSync(path.join(site, 'trap/index.html'), { recursive: true });
  // Links: out of the folder (file, folder, folder index) and one that stays inside.
  symlinkSync(path.join(base, 'outside.txt'), path.join(site, 'link-out.txt'));
  symlinkSync(path.join(base, 'site-secret'), path.join(site, 'dir-out'));
  mkdirSync(path.join(site, 'indexlink'));
  symlinkSync(path.join(base, 'outside.txt'), path.join(site, 'indexlink/index.html'));
  symlinkSync(path.join(site, 'app.js'), path.join(site, 'link-in.js'));
  symlinkSync(path.join(site, '.env'), path.join(site, 'to-dotfile.txt'));
  // The planted link to /etc (the server runs as root in CI).
  symlinkSync('/etc', path.join(site, 'etc-link'));
  // A FIFO: reading it would block the request forever.
  spawnSync('mkfifo', [path.join(site, 'pipe.txt')]);
  server = await startServer(site, 0);
});

after(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

/** A raw HTTP request (no client-side path normalisation): resolves to { status, headers, body } or { error }. */
function request(pathname, { method = 'GET', headers = {}, port = server.port } = {}) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathname, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', (error) => resolve({ error }));
      res.on('aborted', () => resolve({ error: new Error('aborted') }));
    });
    req.setTimeout(10000, () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve({ error }));
    req.end();
  });
}

/** Each path gets a 4xx answer that holds neither the planted secret nor /etc/passwd's first line. */
async function assertRefused(paths) {
  for (const attempt of paths) {
    const r = await request(attempt);
    assert.ok(r.status >= 400 && r.status < 500, `${attempt} -> ${r.status ?? r.error?.message}`);
    assert.ok(!r.body.includes(SECRET) && !r.body.includes('root:'), `${attempt} leaks nothing`);
  }
}

async function assertStillServing() {
  const r = await request('/app.js');
  assert.equal(r.status, 200, 'the server still answers after the request');
}

test('serves files with the right types and the embedding headers', async () => {
  const cases = [
    ['/', 'text/html'],
    ['/index.html', 'text/html'],
    ['/app.js', 'text/javascript'],
    ['/mod.mjs', 'text/javascript'],
    ['/data.json', 'application/json'],
    ['/tally.wasm', 'application/wasm'],
    ['/sub/page.txt', 'text/plain'],
  ];
  for (const [pathname, type] of cases) {
    const r = await request(pathname);
    assert.equal(r.status, 200, pathname);
    assert.equal(r.headers['content-type'].split(';')[0], type, pathname);
    assert.equal(r.headers['access-control-allow-origin'], '*', `${pathname}: embedding on other origins needs CORS`);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', pathname);
    assert.equal(r.headers['content-security-policy'], PAGE_CSP, pathname);
  }
  assert.equal((await request('/tally.wasm')).body.length, 8);
});

test('error responses carry nosniff and CORS too', async () => {
  const r = await request('/missing.js');
  assert.equal(r.status, 404);
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
  assert.equal(r.headers['access-control-allow-origin'], '*');
});

test('binds 127.0.0.1 only', async () => {
  const reached = await new Promise((resolve) => {
    const addresses = Object.values(os.networkInterfaces())
      .flat()
      .filter((a) => a.family === 'IPv4' && !a.internal);
    if (!addresses.length) {
      resolve(null);
      return;
    }
    const socket = net.connect({ host: addresses[0].address, port: server.port });
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
  assert.notEqual(reached, true, 'not reachable on a non-loopback address');
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
});

test('encoded "..", backslashes and sibling-prefix folders do not leave the folder', async () => {
  const attempts = [
    '/..%2fsite-secret/secret.txt',
    '/%2e%2e/site-secret/secret.txt',
    '/%2e%2e%2fsite-secret%2fsecret.txt',
    '/..%5csite-secret%5csecret.txt',
    '/%252e%252e%252fsite-secret/secret.txt',
    '/sub/..%2f..%2foutside.txt',
    '/../outside.txt',
    '/..%2f..%2f..%2f..%2fetc%2fpasswd',
    '/%00',
    '/app.js%00.html',
    '/%zz',
  ];
  await assertRefused(attempts);
  await assertStillServing();
});

test('symlinks that lead out of the folder are not followed; links inside it are', async () => {
  for (const pathname of ['/link-out.txt', '/dir-out/secret.txt', '/indexlink/', '/to-dotfile.txt']) {
    const r = await request(pathname);
    assert.equal(r.status, 404, pathname);
    assert.ok(!r.body.includes(SECRET), pathname);
  }
  const inside = await request('/link-in.js');
  assert.equal(inside.status, 200);
  assert.equal(inside.body, 'export const x = 1;\n');
});

test('dotfiles and dot-folders are not served', async () => {
  for (const pathname of ['/.env', '/.git/config', '/sub/.hidden', '/%2eenv', '/.git/']) {
    const r = await request(pathname);
    assert.equal(r.status, 404, pathname);
    assert.ok(!r.body.includes(SECRET), pathname);
  }
});

test('only GET and HEAD: other methods get 405 with Allow', async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND']) {
    const r = await request('/app.js', { method });
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.allow, 'GET, HEAD', method);
  }
  const head = await request('/app.js', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['content-length'], String('export const x = 1;\n'.length));
});

test('a folder named index.html, a FIFO and a missing file answer 404 without taking the server down', async () => {
  for (const pathname of ['/trap/', '/trap', '/trap/index.html', '/pipe.txt', '/nope/', '/sub']) {
    const r = await request(pathname);
    assert.ok(r.status === 404 || r.status === 301, `${pathname} -> ${r.status ?? r.error}`);
  }
  await assertStillServing();
});

test('paths that start with "//" (read as a host name by URL parsers) do not leave the folder or reach a dotfile or FIFO', async () => {
  // The issue 21 reproductions: the checks read "//name/..." as host "name" while the file lookup read it as a path.
  const attempts = [
    '//etc-link/passwd',
    '//link-out.txt',
    '//dir-out/secret.txt',
    '///dir-out/secret.txt',
    '/.//dir-out/secret.txt',
    '/sub//..//link-out.txt',
    '//to-dotfile.txt',
    '//.env',
    '//indexlink/',
    '%2f%2flink-out.txt',
    'http://127.0.0.1/dir-out/secret.txt',
    '//pipe.txt',
  ];
  await assertRefused(attempts);
  // Four readers of the FIFO held every file-I/O thread, so the next request hung; now each is refused at once.
  const pipes = await Promise.all([1, 2, 3, 4].map(() => request('//pipe.txt')));
  assert.deepEqual(
    pipes.map((r) => r.status),
    [404, 404, 404, 404],
  );
  await assertStillServing();
  // A doubled slash inside a legitimate path still names the same file.
  const doubled = await request('//sub//page.txt');
  assert.equal(doubled.status, 200);
  assert.equal(doubled.body, 'a page\n');
});

test('requestPath reads a target once: origin-form only, decoded once, no "." or ".." segments', () => {
  assert.deepEqual(requestPath('//etc-link/passwd?x=1'), {
    path: '/etc-link/passwd',
    query: '?x=1',
    segments: ['etc-link', 'passwd'],
  });
  assert.equal(requestPath('/a%2Fb').path, '/a/b');
  assert.equal(requestPath('/sub/').path, '/sub/');
  assert.equal(requestPath('/%252e%252e/x').path, '/%2e%2e/x', 'decoded once, not twice');
  for (const bad of ['', 'x', 'http://h/x', '/../x', '/a/./b', '/%2e%2e/x', '/a%00', '/a%5cb', '/%zz', '*'])
    assert.equal(requestPath(bad), null, JSON.stringify(bad));
});

test('every answer carries the embedding headers: 200, 301, 400, 404, 405 and 431', async () => {
  const answers = {
    200: await request('/app.js'),
    301: await request('/sub'),
    400: await request('/%zz'),
    404: await request('/missing.js'),
    405: await request('/app.js', { method: 'POST' }),
    431: await request(`/index.html?x=${'y'.repeat(MAX_HEADER_BYTES + 10)}`),
  };
  for (const [status, r] of Object.entries(answers)) {
    assert.equal(r.status, Number(status), `${status}: ${r.error?.message ?? ''}`);
    assert.equal(r.headers['access-control-allow-origin'], '*', status);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', status);
    assert.equal(r.headers['content-security-policy'], PAGE_CSP, status);
  }
  assert.equal(answers[301].headers.location, '/sub/');
  // A malformed request line never reaches the handler: its 400 carries the headers too.
  const raw = await new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: server.port }, () => socket.write('GARBAGE\r\n\r\n'));
    const chunks = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
  assert.match(raw, /^HTTP\/1\.1 400 /);
  assert.match(raw, /\r\nAccess-Control-Allow-Origin: \*\r\n/);
  assert.match(raw, /\r\nX-Content-Type-Options: nosniff\r\n/);
  assert.ok(raw.includes(`\r\nContent-Security-Policy: ${PAGE_CSP}\r\n`));
});

test('files replaced while being served (a rebuild) never take the server down', async () => {
  const file = path.join(site, 'big.bin');
  const write = (fill) => writeFileSync(file, Buffer.alloc(4 << 20, fill));
  write(1);
  const requests = [];
  for (let i = 0; i < 40; i++) {
    requests.push(request('/big.bin'));
    // Replace by rename, by rewrite in place (truncation mid-stream) and by deletion, as build tools do.
    if (i % 3 === 0) {
      writeFileSync(`${file}.tmp`, Buffer.alloc(1 << 20, 2));
      renameSync(`${file}.tmp`, file);
    } else if (i % 3 === 1) write(3);
    else {
      unlinkSync(file);
      write(4);
    }
    await new Promise((r) => setImmediate(r));
  }
  const results = await Promise.all(requests);
  for (const r of results) assert.ok(r.error || [200, 404].includes(r.status), `status ${r.status}`);
  await assertStillServing();
});

test('an unreadable file answers an error, not a crash', async (t) => {
  // As root every file is readable, so the server runs as "nobody" in a child process then. A checkout
  // inside a private folder (mktemp -d is mode 0700) is out of nobody's reach: then the case cannot be set up.
  const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  if (asNobody.uid !== undefined) {
    const probe = spawnSync(
      process.execPath,
      [
        '-e',
        'require("fs").accessSync(process.argv[1]); require("fs").readdirSync(process.argv[2])',
        serverScript,
        site,
      ],
      asNobody,
    );
    if (probe.status !== 0) {
      t.skip(
        `user nobody cannot read ${serverScript} or ${site} (a parent folder is private), so the server cannot run as nobody`,
      );
      return;
    }
  }
  const unreadable = path.join(site, 'locked.js');
  writeFileSync(unreadable, 'secret');
  chmodSync(unreadable, 0o000);
  const port = await freePort();
  const child = spawn(process.execPath, [serverScript, site, '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...asNobody,
  });
  t.after(() => child.kill());
  await waitForOutput(child, /tally explainer: http:\/\/127\.0\.0\.1/);
  const r = await request('/locked.js', { port });
  assert.ok(r.status >= 400, `status ${r.status}`);
  assert.ok(!r.body.includes('secret'));
  assert.equal((await request('/app.js', { port })).status, 200, 'still serving');
  assert.equal(child.exitCode, null, 'still running');
  chmodSync(unreadable, 0o644);
});

test('long URLs below the header limit load; over it, 431 and the server lives on', async () => {
  const ok = await request(`/index.html?mem1.config=${'x'.repeat(20000)}`);
  assert.equal(ok.status, 200, 'the 20,000-character URL values the page used to accept load');
  const tooLong = await request(`/index.html?x=${'y'.repeat(MAX_HEADER_BYTES + 10)}`);
  assert.ok(tooLong.error || tooLong.status === 431, `status ${tooLong.status}`);
  await assertStillServing();
});

test('--port takes decimal 1 to 65535 only', () => {
  for (const bad of ['0x50', '1e3', '', ' 80', '80 ', '0', '65536', '-1', '80abc', '8.0', '+80', '1_000', '999999'])
    assert.throws(() => parsePort(bad), /--port must be a whole decimal number in \[1, 65535\]/, JSON.stringify(bad));
  assert.equal(parsePort('80'), 80);
  assert.equal(parsePort('65535'), 65535);
  assert.throws(() => parseArgs(['site', '--port']), /needs a value/);
  assert.throws(() => parseArgs(['site', '--port', '80', '--port', '81']), /twice/);
  assert.throws(() => parseArgs(['site', '--verbose']), /unknown option --verbose/);
  assert.deepEqual(parseArgs(['site', '--port=8080']), { dir: 'site', port: 8080 });
});

test('the command line exits 2 with a message for a bad port or a missing folder', () => {
  for (const args of [
    [site, '--port', '0x50'],
    [site, '--port', '1e3'],
    [site, '--port', ''],
    [path.join(base, 'no-such-folder'), '--port', '8123'],
    [path.join(site, 'app.js'), '--port', '8123'],
  ]) {
    const run = spawnSync(process.execPath, [serverScript, ...args], { encoding: 'utf8', timeout: 10000 });
    assert.equal(run.status, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, /static-server: (--port must be|cannot serve .*(no such folder|not a folder))/);
  }
});

test('startServer rejects a missing folder', async () => {
  await assert.rejects(startServer(path.join(base, 'absent')), /cannot serve .*no such folder/);
});

function freePort() {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function waitForOutput(child, pattern) {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${text}`)), 10000);
    const onData = (chunk) => {
      text += chunk;
      if (pattern.test(text)) {
        clearTimeout(timer);
        resolve(text);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code}: ${text}`));
    });
  });
}

test('compressible files go out brotli- or gzip-compressed as the browser accepts, and decode to the file', async () => {
  const text = `export const table = ${JSON.stringify(Array.from({ length: 400 }, (_, i) => i * i))};\n`;
  writeFileSync(path.join(site, 'table.js'), text);
  const fetchRaw = (headers) =>
    new Promise((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port: server.port, path: '/table.js', headers, agent: false },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        },
      );
      req.on('error', reject);
    });
  const br = await fetchRaw({ 'Accept-Encoding': 'gzip, deflate, br' });
  assert.equal(br.headers['content-encoding'], 'br');
  assert.match(br.headers.vary, /accept-encoding/i);
  assert.ok(br.body.length < text.length / 2, `${br.body.length} bytes for ${text.length}`);
  assert.equal(zlib.brotliDecompressSync(br.body).toString('utf8'), text);
  const gz = await fetchRaw({ 'Accept-Encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(zlib.gunzipSync(gz.body).toString('utf8'), text);
  // The embedding headers survive compression.
  assert.equal(gz.headers['access-control-allow-origin'], '*');
  assert.equal(gz.headers['content-security-policy'], PAGE_CSP);
  const plain = await fetchRaw({});
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.body.toString('utf8'), text);
});

test('caching: the page and engine are revalidated (304 when unchanged), the vendored fonts kept a week', async () => {
  mkdirSync(path.join(site, 'vendor/katex/fonts'), { recursive: true });
  writeFileSync(path.join(site, 'vendor/katex/fonts/KaTeX_Main-Regular.woff2'), Buffer.alloc(64, 7));
  const font = await request('/vendor/katex/fonts/KaTeX_Main-Regular.woff2');
  assert.equal(font.status, 200);
  assert.equal(font.headers['cache-control'], `public, max-age=${FONT_MAX_AGE}`);
  for (const pathname of ['/index.html', '/app.js', '/tally.wasm']) {
    const first = await request(pathname);
    assert.equal(first.headers['cache-control'], 'no-cache', pathname);
    assert.ok(first.headers.etag, `${pathname} has an ETag`);
    const again = await request(pathname, { headers: { 'If-None-Match': first.headers.etag } });
    assert.equal(again.status, 304, `${pathname} unchanged -> 304`);
  }
  assert.equal(cacheControlFor('/site/fonts-not-vendor/x.woff2'), 'no-cache');
});

/** What a raw socket gets back for `text` (the whole exchange, the server closing the connection). */
function rawExchange(text, port = server.port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write(text));
    const chunks = [];
    socket.setTimeout(10000, () => socket.destroy());
    socket.on('data', (c) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', () => {});
  });
}

test('a path swapped for a symlink, a folder link or a FIFO between the check and the open is never served', async (t) => {
  // beforeOpen runs after the path was resolved and checked, just before the one open: the swap lands exactly in
  // the window a by-name server (check, then open again by name) would have read the outside file through.
  writeFileSync(path.join(base, 'site-secret/inner.txt'), SECRET);
  const swaps = {
    // The file itself becomes a link out: O_NOFOLLOW refuses it (ELOOP).
    'swap-file.txt': (file) => {
      unlinkSync(file);
      symlinkSync(path.join(base, 'outside.txt'), file);
    },
    // A folder on the way becomes a link out: the open follows it, the descriptor's real path is outside.
    'swap-dir/inner.txt': () => {
      rmSync(path.join(site, 'swap-dir'), { recursive: true });
      symlinkSync(path.join(base, 'site-secret'), path.join(site, 'swap-dir'));
    },
    // The file becomes a FIFO: O_NONBLOCK opens it without waiting for a writer, fstat refuses it.
    'swap-fifo.txt': (file) => {
      unlinkSync(file);
      spawnSync('mkfifo', [file]);
    },
  };
  writeFileSync(path.join(site, 'swap-file.txt'), 'inside\n');
  mkdirSync(path.join(site, 'swap-dir'));
  writeFileSync(path.join(site, 'swap-dir/inner.txt'), 'inside\n');
  writeFileSync(path.join(site, 'swap-fifo.txt'), 'inside\n');
  const swapped = [];
  const racing = await startServer(site, 0, {
    beforeOpen: (file) => {
      const name = path.relative(site, file).split(path.sep).join('/');
      if (swaps[name]) {
        swapped.push(name);
        swaps[name](file);
      }
    },
  });
  t.after(() => racing.close());
  for (const name of Object.keys(swaps)) {
    const r = await request(`/${name}`, { port: racing.port });
    assert.equal(r.status, 404, `${name} -> ${r.status ?? r.error?.message}`);
    assert.ok(!r.body.includes(SECRET), `${name} leaks nothing`);
  }
  assert.deepEqual(swapped, Object.keys(swaps), 'each swap happened between the check and the open');
  assert.equal((await request('/app.js', { port: racing.port })).status, 200, 'still serving');
  assert.equal(OPEN_FLAGS & FS.O_NOFOLLOW, FS.O_NOFOLLOW);
  assert.equal(OPEN_FLAGS & FS.O_NONBLOCK, FS.O_NONBLOCK);
});

test('a Range request is answered uncompressed (identity 206) whatever the Accept-Encoding', async () => {
  // expressjs/compression#185: the middleware compressed the 206, so the bytes did not match the range.
  const text = `export const squares = ${JSON.stringify(Array.from({ length: 600 }, (_, i) => i * i))};\n`;
  writeFileSync(path.join(site, 'ranged.js'), text);
  const ranged = (range) =>
    request('/ranged.js', { headers: { Range: range, 'Accept-Encoding': 'gzip, deflate, br' } });
  const head = await ranged('bytes=0-99');
  assert.equal(head.status, 206);
  assert.equal(head.headers['content-encoding'], undefined, 'not compressed');
  assert.equal(head.headers['content-range'], `bytes 0-99/${text.length}`);
  assert.equal(head.body, text.slice(0, 100));
  const tail = await ranged('bytes=-10');
  assert.equal(tail.status, 206);
  assert.equal(tail.headers['content-encoding'], undefined);
  assert.equal(tail.body, text.slice(-10));
  const middle = await ranged('bytes=1000-');
  assert.equal(middle.body, text.slice(1000));
  const beyond = await ranged(`bytes=${text.length + 5}-`);
  assert.equal(beyond.status, 416);
  assert.equal(beyond.headers['content-range'], `bytes */${text.length}`);
  assert.equal(beyond.headers['access-control-allow-origin'], '*');
  // Without Range the same request is compressed.
  const whole = await request('/ranged.js', { headers: { 'Accept-Encoding': 'gzip, deflate, br' } });
  assert.equal(whole.headers['content-encoding'], 'br');
  assert.equal(whole.headers['accept-ranges'], 'bytes');
});

test("node's own answers carry the common headers: 400 without Host, 417 for an unknown Expect, 405 for CONNECT", async () => {
  const answers = {
    400: await rawExchange('GET /app.js HTTP/1.1\r\n\r\n'),
    417: await rawExchange('GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\n\r\n'),
    405: await rawExchange('CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n'),
  };
  for (const [status, raw] of Object.entries(answers)) {
    assert.match(raw, new RegExp(`^HTTP/1\\.1 ${status} `), `${status}: ${JSON.stringify(raw.slice(0, 80))}`);
    assert.match(raw, /\r\nAccess-Control-Allow-Origin: \*\r\n/i, status);
    assert.match(raw, /\r\nX-Content-Type-Options: nosniff\r\n/i, status);
    assert.ok(raw.toLowerCase().includes(`\r\ncontent-security-policy: ${PAGE_CSP.toLowerCase()}\r\n`), status);
  }
  assert.match(answers[405], /\r\nAllow: GET, HEAD\r\n/i);
  // HTTP/1.0 needs no Host; "Expect: 100-continue" still gets its interim answer and the file.
  assert.match(await rawExchange('GET /app.js HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 /);
  const continued = await rawExchange(
    'GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n',
  );
  assert.match(continued, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  await assertStillServing();
});

test('a compressed file is prepared once per version and encoding, not per request', async () => {
  const file = path.join(site, 'once.js');
  const text = (n) => `export const cubes = ${JSON.stringify(Array.from({ length: n }, (_, i) => i ** 3))};\n`;
  writeFileSync(file, text(500));
  const get = (encoding) => request('/once.js', { headers: { 'Accept-Encoding': encoding } });
  const before = server.compressions;
  for (let i = 0; i < 5; i++) assert.equal((await get('br')).headers['content-encoding'], 'br');
  assert.equal(server.compressions, before + 1, 'five brotli requests, one compression');
  const results = await Promise.all([1, 2, 3, 4].map(() => get('gzip')));
  assert.ok(results.every((r) => r.headers['content-encoding'] === 'gzip'));
  assert.equal(server.compressions, before + 2, 'four concurrent gzip requests, one compression');
  // A new version of the file (its size and mtime change) is compressed again, and the new bytes are served.
  writeFileSync(file, text(700));
  const raw = await new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: server.port, path: '/once.js', headers: { 'Accept-Encoding': 'br' } }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      })
      .on('error', reject);
  });
  assert.equal(zlib.brotliDecompressSync(raw).toString('utf8'), text(700));
  assert.equal(server.compressions, before + 3);
  assert.equal((await get('br')).status, 200);
  assert.equal(server.compressions, before + 3);
});

test('started as root, the command line drops to nobody after listening and says so, or says why it could not', async (t) => {
  if (process.getuid?.() !== 0) {
    t.skip('not running as root: nothing to drop');
    return;
  }
  const uidOf = (pid) =>
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .match(/^Uid:\s+(.*)$/m)[1]
      .split(/\s+/);
  // base is mode 0755 (set in before()), so nobody can read the site.
  const probe = spawnSync(process.execPath, ['-e', 'require("fs").readdirSync(process.argv[1])', site], {
    uid: 65534,
    gid: 65534,
  });
  if (probe.status === 0) {
    const port = await freePort();
    const child = spawn(process.execPath, [serverScript, site, '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => child.kill());
    const text = await waitForOutput(child, /tally explainer: http:\/\/127\.0\.0\.1/);
    assert.match(text, /started as root, now running as user nobody \(uid 65534, gid 65534\)/);
    assert.deepEqual(uidOf(child.pid), ['65534', '65534', '65534', '65534'], 'real, effective, saved and fs uid');
    const r = await request('/app.js', { port });
    assert.equal(r.status, 200, 'still serves, as nobody');
    assert.equal(r.body, 'export const x = 1;\n');
  } else {
    t.diagnostic(`nobody cannot read ${site}: only the "could not" case runs`);
  }
  // A site under a private folder (mode 0700): nobody could not read it, so the server stays root and says why.
  const secret = mkdtempSync(path.join(os.tmpdir(), 'tally-private-'));
  t.after(() => rmSync(secret, { recursive: true, force: true }));
  chmodSync(secret, 0o700);
  writeFileSync(path.join(secret, 'index.html'), '<!doctype html><title>private</title>');
  const port = await freePort();
  const child = spawn(process.execPath, [serverScript, secret, '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill());
  const text = await waitForOutput(child, /tally explainer: http:\/\/127\.0\.0\.1/);
  assert.match(
    text,
    /still running as root: user nobody \(uid 65534, gid 65534\) cannot read .*tally-private-.* \(EACCES/,
  );
  assert.equal(uidOf(child.pid)[1], '0');
  assert.equal((await request('/', { port })).status, 200, 'still serves, as root');
});
