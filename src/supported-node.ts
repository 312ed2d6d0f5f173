// Loaded first by every entry (index, testing, main): on an older Node the service's
// dependencies fail to load with errors that name none of this (undici 8 reads a zstd binding
// Node 20 lacks), so the version is checked before anything else loads.

/** The oldest Node this package runs on: package.json `engines` (a test keeps them equal). */
export const OLDEST_SUPPORTED_NODE = '22.19';

/** Whether `version` (`process.versions.node`) is at least {@link OLDEST_SUPPORTED_NODE}. */
export function isSupportedNode(version: string): boolean {
  const [major, minor] = version.split('.').map(Number);
  const [oldestMajor, oldestMinor] = OLDEST_SUPPORTED_NODE.split('.').map(Number);
  return major > oldestMajor || (major === oldestMajor && minor >= oldestMinor);
}

if (!isSupportedNode(process.versions.node)) {
  throw new Error(
    `nestjs-bulkhead needs Node.js ${OLDEST_SUPPORTED_NODE} or newer; this is Node.js ${process.versions.node}`,
  );
}
