// The sizes table of docs/EMBEDDING.md ("Sizes"), measured: packs the npm package, builds the single file and
// the classic script into a temporary folder and prints the table; --write replaces the table between the
// `<!-- sizes -->` and `<!-- /sizes -->` markers. usage: node scripts/upkeep/embed-sizes.mjs [--site build/site] [--write]
// tests/browser/hosts.test.mjs checks the package's rows against a fresh pack.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = path.join(root, 'docs/EMBEDDING.md');
const MARKERS = /(<!-- sizes -->\n)[\s\S]*?(<!-- \/sizes -->)/;

const bytes = (n) => n.toLocaleString('en-US');
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
const mib = (n) => `${(n / 2 ** 20).toFixed(2)} MiB`;

/** The table's rows from measured figures: {pack (npm pack --json report), single, classic: Buffer}. */
export function sizesTable({ pack, single, classic }) {
  const file = (name) => pack.files.find((f) => f.path === name)?.size ?? 0;
  const gz = (buffer) => gzipSync(buffer, { level: 9 }).length;
  return [
    '| artefact | size |',
    '|---|---|',
    `| npm package, packed (\`${pack.filename}\`) | ${bytes(pack.size)} bytes (${kib(pack.size)}), ${pack.entryCount} files |`,
    `| npm package, unpacked | ${bytes(pack.unpackedSize)} bytes (${mib(pack.unpackedSize)}): tally.wasm ${bytes(file('tally.wasm'))}, tally-widgets.classic.js ${bytes(file('tally-widgets.classic.js'))}, widgets and engine glue the rest |`,
    `| classic script \`tally-widgets.classic.js\` | ${bytes(classic.length)} bytes (${mib(classic.length)}; ${mib(gz(classic))} gzip) |`,
    `| single file \`build/single/tally.html\` | ${bytes(single.length)} bytes (${mib(single.length)}; ${mib(gz(single))} gzip) |`,
  ].join('\n');
}

/** The package rows of the table in EMBEDDING.md now: {packed, files, unpacked} (bytes, count, bytes). */
export function documentedPackage(text = readFileSync(DOC, 'utf8')) {
  const packed = /npm package, packed \([^)]*\) \| ([\d,]+) bytes \([^)]*\), (\d+) files/.exec(text);
  const unpacked = /npm package, unpacked \| ([\d,]+) bytes/.exec(text);
  if (!packed || !unpacked) throw new Error('docs/EMBEDDING.md has no sizes table rows for the npm package');
  const number = (s) => Number(s.replace(/,/g, ''));
  return { packed: number(packed[1]), files: Number(packed[2]), unpacked: number(unpacked[1]) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const site = path.resolve(root, argv.includes('--site') ? argv[argv.indexOf('--site') + 1] : 'build/site');
  const work = mkdtempSync(path.join(os.tmpdir(), 'tally-sizes-'));
  try {
    const run = (script, args) => execFileSync(process.execPath, [path.join(root, 'scripts/build', script), ...args]);
    run('pack-widgets.mjs', ['--site', site, '--out', path.join(work, 'pack')]);
    run('build-single-file.mjs', ['--site', site, '--out', path.join(work, 'tally.html')]);
    const pack = JSON.parse(readFileSync(path.join(work, 'pack/pack.json'), 'utf8'));
    const table = sizesTable({
      pack,
      single: readFileSync(path.join(work, 'tally.html')),
      classic: readFileSync(path.join(work, 'pack/stage/tally-widgets.classic.js')),
    });
    console.log(table);
    if (argv.includes('--write')) {
      const doc = readFileSync(DOC, 'utf8');
      if (!MARKERS.test(doc)) throw new Error('docs/EMBEDDING.md has no <!-- sizes --> … <!-- /sizes --> markers');
      writeFileSync(
        DOC,
        doc.replace(MARKERS, (_, open, close) => `${open}${table}\n${close}`),
      );
      console.log(`embed-sizes: wrote the table into ${path.relative(root, DOC)} (${statSync(DOC).size} bytes)`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
