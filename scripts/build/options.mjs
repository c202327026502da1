// What the build scripts share: the repository root, their `--name value` options and one way to fail.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);

/** The value after `--name` on the command line, or `fallback`. */
export const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);

/** A path option (`--site build/site`), resolved against the repository root. */
export const pathOption = (name, fallback) => path.resolve(root, option(name, fallback));

/** A fail(message) for `script`: prints "script: message" and exits 1. */
export const failer = (script) => (message) => {
  console.error(`${script}: ${message}`);
  process.exit(1);
};
