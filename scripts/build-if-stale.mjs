#!/usr/bin/env node
/**
 * `npm start`'s pre-step: builds only when a source is newer than the build. `npm ci` builds
 * through `prepare`, so the first start after it does not build again; a start after editing a
 * file under src/ or web/ (or a tsconfig, or package.json) rebuilds first.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The newest modification time under `target` (a file or a folder), 0 when it does not exist. */
function newest(target) {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(target, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    latest = Math.max(latest, newest(path.join(target, entry.name)));
  }
  return latest;
}

const sources = ['src', 'web', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
const sourceTime = Math.max(...sources.map((source) => newest(path.join(root, source))));
const buildTime = newest(path.join(root, 'dist'));
if (buildTime > 0 && buildTime >= sourceTime) process.exit(0);

process.stderr.write(buildTime ? 'sources changed since the last build: building\n' : 'no build yet: building\n');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
