import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** How the MCP server names itself in `initialize`: the package and its version. */
export const SERVER_INFO = { name: 'bulkhead', version: packageVersion() };

/** The package's version, from its package.json (two levels up from src/mcp and dist/mcp alike). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}
