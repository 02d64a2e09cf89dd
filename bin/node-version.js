// The oldest Node that emi runs on, as package.json's `engines` says. An older one (Debian 12's own `nodejs` is
// Node 18) would fail later and obscurely, deep in a command; the launcher says so in one line instead.
export const MIN_NODE = '20.19.0';

/** One line saying that `version` is older than MIN_NODE, or null when it will do. */
export function nodeTooOld(version = process.versions.node) {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [needMajor = 0, needMinor = 0] = MIN_NODE.split('.').map(Number);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return (
    `emi: needs Node ${MIN_NODE} or newer, and this is Node ${version} (${process.execPath}); ` +
    "on Debian 12, whose own nodejs is Node 18, see deploy/README.md's nginx recipe"
  );
}
