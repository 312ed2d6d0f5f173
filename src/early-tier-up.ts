// Loaded by the service's own entry (main) right after the Node check, before the app's code:
// the functions of the request path are optimised sooner. Not by the package's other entries: a
// company's process is its own to tune (docs/operations.md).
import { setFlagsFromString } from 'node:v8';
import { tierUpFlag } from './tier-up-flag';

const flag = tierUpFlag(process.execArgv);
if (flag !== undefined) setFlagsFromString(flag);
