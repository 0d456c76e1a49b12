// The Node.js releases wa-gateway runs on, checked before anything else loads. A release below
// the floor does not fail cleanly on its own: better-sqlite3 13 crashes natively on Node 20, and
// some dependencies need require(esm), unflagged since 22.12. See docs/adr/0025-node-releases.md.

/** The oldest release that works, as [major, minor]. */
const MINIMUM_NODE = [22, 12];

/** The release CI tests fully and the README recommends (the active LTS). */
const RECOMMENDED_NODE_MAJOR = 24;

/**
 * Why this Node.js cannot run the gateway, in one line, or null when it can.
 * @param {string} version process.versions.node, e.g. "20.20.2"
 */
export function unsupportedNodeMessage(version) {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  const [floorMajor, floorMinor] = MINIMUM_NODE;
  if (major > floorMajor || (major === floorMajor && minor >= floorMinor)) return null;
  return (
    `wa-gateway needs Node.js ${floorMajor}.${floorMinor} or later (${RECOMMENDED_NODE_MAJOR} LTS recommended), ` +
    `and this is Node.js ${version}; scripts/node.sh runs a command on a supported one.`
  );
}
