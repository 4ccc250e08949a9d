import { isExecutable, run } from "./executables.js";

/**
 * Installs Debian packages with apt-get, the way the project provides the servers it runs when they are
 * missing (PostgreSQL, nginx): `npm test` and `flowlog cluster up` stay the whole set-up on a fresh
 * machine. `missing` says what was looked for, for the errors of a machine where this cannot work.
 */
export async function installDebianPackages(packages: string[], missing: string): Promise<void> {
  if (!(await isExecutable("/usr/bin/apt-get"))) {
    throw new Error(`${missing}, and this is not a Debian machine: install ${packages.join(" ")} yourself`);
  }
  if (process.getuid?.() !== 0) {
    throw new Error(
      `${missing}: run \`apt-get install ${packages.join(" ")}\` as root, or run this as root to let it do so`,
    );
  }
  console.error(`Installing ${packages.join(", ")} with apt-get (Debian's packages, first time only)...`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  await run("apt-get", ["update"], env);
  await run("apt-get", ["install", "-y", "--no-install-recommends", ...packages], env);
}
