import { tearDownRunRedis } from './redis-global-setup';

/** Jest's global teardown: see redis-global-setup.ts. */
export default tearDownRunRedis;
