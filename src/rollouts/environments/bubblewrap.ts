/**
 * The command sandbox's OS layer: each program runs under bubblewrap (`bwrap`, Debian's
 * `bubblewrap`) in new user, PID, network, IPC, UTS and cgroup namespaces, with every capability
 * dropped, in a session of its own, killed with its parent. Its file system is a read-only root
 * holding the system's programs and libraries (`/usr` and the `/bin`, `/lib`… links or folders
 * beside it, read-only), the dynamic linker's cache, a private `/dev` and `/proc`, and the
 * sandbox's directory at its own path, the only writable place that outlives the program:
 * every other path of the machine (home folders, `/tmp`, `/etc`, other tasks' folders) is absent.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';

/** Folders beside `/usr` that programs load from; on merged-usr systems they are links into it. */
const systemFolders = ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'];

let systemLayout: string[] | undefined;
/** The read-only system part of the sandbox's file system, as bwrap arguments (read once). */
function systemArguments(): string[] {
  systemLayout ??= [
    '--ro-bind', '/usr', '/usr',
    ...systemFolders.flatMap((folder) => {
      if (!existsSync(folder)) return [];
      return lstatSync(folder).isSymbolicLink() ? ['--symlink', readlinkSync(folder), folder] : ['--ro-bind', folder, folder];
    }),
    '--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache',
    '--ro-bind-try', '/etc/alternatives', '/etc/alternatives',
  ];
  return systemLayout;
}

/** The bwrap arguments running `program` confined, with `binds` (bwrap `--bind` pairs and the like) as the only writable places. */
function confinedArguments(binds: readonly string[], program: string, programArguments: readonly string[]): string[] {
  return [
    '--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL',
    ...systemArguments(),
    '--dev', '/dev', '--proc', '/proc',
    ...binds,
    // After the binds: the root bwrap built, with the folders it made for them, turns read-only.
    '--remount-ro', '/',
    '--', program, ...programArguments,
  ];
}

/** `program arguments…` as the bwrap command line that runs it confined to `directory` (a real path), there. */
export function bubblewrapCommand(directory: string, program: string, programArguments: readonly string[]): { command: string; arguments: string[] } {
  return { command: 'bwrap', arguments: confinedArguments(['--bind', directory, directory, '--chdir', directory], program, programArguments) };
}

let problem: string | null | undefined;
/** Why bwrap cannot sandbox a program on this machine (not installed, namespaces refused), or null when it can. Checked once. */
export function bubblewrapProblem(): string | null {
  if (problem !== undefined) return problem;
  const result = spawnSync('bwrap', confinedArguments([], 'true', []), { encoding: 'utf8', timeout: 5000, env: { PATH: '/usr/bin:/bin' } });
  if (result.error !== undefined) problem = `bwrap cannot start (${result.error.message})`;
  else if (result.status !== 0) problem = `bwrap fails here (${(result.stderr || `exit ${result.status}`).trim()})`;
  else problem = null;
  return problem;
}
