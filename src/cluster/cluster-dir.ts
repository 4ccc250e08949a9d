import { constants, openSync, type Stats } from "node:fs";
import { chmod, mkdir, open, realpath, stat } from "node:fs/promises";
import path from "node:path";

/**
 * The cluster's directory holds what its commands trust (issue 49): the pids `down` signals, the master
 * key and the database password its processes get, the nginx.conf that root runs. Whoever can write there
 * can make root signal any process, read every secret or run any program. So every command refuses a
 * directory that is not its own user's alone, or that sits where another user could replace it, and
 * writes its files without following a link planted in their place.
 */

const { O_RDONLY, O_WRONLY, O_APPEND, O_CREAT, O_EXCL, O_TRUNC, O_NOFOLLOW } = constants;
const writableByOthers = 0o022;
const sticky = 0o1000;

/**
 * The mode of the cluster's directory, and of those inside it that other accounts pass through. As root,
 * PostgreSQL runs as its own account and nginx's workers as theirs (tools/postgres-server.ts, nginx.ts):
 * they pass through by name (search only) to their own subdirectories; nobody may list or write them.
 */
export const passThroughMode = process.getuid?.() === 0 ? 0o711 : 0o700;

class UntrustedClusterDirError extends Error {
  constructor(dir: string, problem: string) {
    super(
      `refusing the cluster directory ${dir}: ${problem}. The cluster trusts what that directory holds ` +
        "(the pids it signals, its keys, the nginx.conf it runs): choose a --dir of your own that only you can write",
    );
    this.name = "UntrustedClusterDirError";
  }
}

/**
 * The real path of the cluster's directory, once checked: created (0700, or 0711 as root) when missing and
 * `create` is set, else undefined when missing. Refused when another user owns it or its group or others
 * can write it, and when a directory above it could be replaced by someone else.
 */
export async function trustedClusterDir(
  dir: string,
  options: { create: boolean },
): Promise<string | undefined> {
  const wanted = path.resolve(dir);
  if (!(await exists(wanted))) {
    if (!options.create) return undefined;
    await mkdir(wanted, { recursive: true, mode: 0o700 });
    // The umask may have taken bits away; the mode is exactly this one.
    await chmod(wanted, passThroughMode);
  }
  const real = await realpath(wanted);
  await checkOwnDir(wanted, real);
  for (let above = path.dirname(real); ; above = path.dirname(above)) {
    await checkAncestor(wanted, above);
    if (above === path.dirname(above)) break;
  }
  return real;
}

/** A subdirectory, created when missing, with `mode` (its owner's alone unless said) either way. */
export async function privateSubdir(dir: string, mode = 0o700): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, mode);
}

async function checkOwnDir(dir: string, real: string): Promise<void> {
  const info = await stat(real);
  const named = real === dir ? dir : `${dir} (${real})`;
  if (!info.isDirectory()) throw new UntrustedClusterDirError(named, "it is not a directory");
  const me = process.getuid?.();
  if (me !== undefined && info.uid !== me) {
    throw new UntrustedClusterDirError(named, `it belongs to uid ${info.uid}, not to this user (uid ${me})`);
  }
  if ((info.mode & writableByOthers) !== 0) {
    throw new UntrustedClusterDirError(named, `its group or others can write it (mode ${modeOf(info)})`);
  }
}

/**
 * A directory above it: root's or this user's, and writable by no one else unless sticky (as /tmp is:
 * others may add their own entries there, never rename or remove ours).
 */
async function checkAncestor(dir: string, above: string): Promise<void> {
  const info = await stat(above);
  const me = process.getuid?.();
  if (me !== undefined && info.uid !== 0 && info.uid !== me) {
    throw new UntrustedClusterDirError(
      dir,
      `${above}, above it, belongs to uid ${info.uid}, who could replace it with a directory of their own`,
    );
  }
  if ((info.mode & writableByOthers) !== 0 && (info.mode & sticky) === 0) {
    throw new UntrustedClusterDirError(
      dir,
      `${above}, above it, can be written by its group or others (mode ${modeOf(info)}), who could replace it`,
    );
  }
}

/** Writes `text` to `file`, readable and writable by its owner only, never through a link planted there. */
export async function writePrivateFile(file: string, text: string): Promise<void> {
  const handle = await openNoFollow(file, O_WRONLY | O_CREAT | O_TRUNC);
  try {
    // The mode of open applies to a new file only: one left by an earlier version is narrowed too.
    await handle.chmod(0o600);
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

/** The file's text, read without following a link; undefined when there is no such file. */
export async function readPrivateFile(file: string): Promise<string | undefined> {
  const handle = await openNoFollow(file, O_RDONLY).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (!handle) return undefined;
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/** A secret made once by `make` and kept in `file` (0600): the same one at every later start. */
export async function keptSecret(file: string, make: () => string): Promise<string> {
  const created = await openNoFollow(file, O_WRONLY | O_CREAT | O_EXCL).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return undefined;
      throw error;
    },
  );
  if (created) {
    try {
      await created.writeFile(make());
    } finally {
      await created.close();
    }
  }
  return ((await readPrivateFile(file)) ?? "").trim();
}

/**
 * Opens `file` to append to it (0600 when new), never through a link: a process's log, which a link
 * planted in its place would turn into root appending to any file of the machine.
 */
export function openAppendSync(file: string): number {
  try {
    return openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0o600);
  } catch (error) {
    throw linkRefused(file, error as NodeJS.ErrnoException);
  }
}

/** open(2) with O_NOFOLLOW and mode 0600. */
async function openNoFollow(file: string, flags: number) {
  return open(file, flags | O_NOFOLLOW, 0o600).catch((error: NodeJS.ErrnoException) => {
    throw linkRefused(file, error);
  });
}

/** A link in the file's place says so, rather than ELOOP's "too many symbolic links". */
function linkRefused(file: string, error: NodeJS.ErrnoException): Error {
  if (error.code !== "ELOOP") return error;
  return new Error(`${file} is a symbolic link: refused, the cluster never reads or writes through one`);
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );
}

function modeOf(info: Stats): string {
  return `0${(info.mode & 0o7777).toString(8)}`;
}
