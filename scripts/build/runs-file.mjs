// A placeholder's `runs_file` (a validation file under content/validation/) becomes `runs`, the file's text, as
// step_validation takes it: the build reads the file, the engine scores it, and the page holds only the result.
// Shared by the site build and the prerender test so that both hand the engine the same arguments.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `args` with its `runs_file` replaced by `runs` (the file's text); `args` itself when it names no file. Throws
 * naming the file when it is not a file under `root`/content/validation/.
 */
export function withRunsFile(args, root) {
  if (!('runs_file' in args)) return args;
  const { runs_file: name, ...rest } = args;
  const folder = path.join(root, 'content/validation');
  const full = path.resolve(folder, String(name));
  if (!full.startsWith(folder + path.sep) || !existsSync(full))
    throw new Error(`runs_file "${name}" is not a file under content/validation/`);
  return { ...rest, runs: readFileSync(full, 'utf8') };
}
