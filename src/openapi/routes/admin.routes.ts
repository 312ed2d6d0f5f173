import { pathName } from '../headers';
import type { RouteDoc } from '../route-doc';
import { EVENTS_LIMIT } from './introspection.routes';

const TENANT = pathName('tenant', 'A tenant name; not `anonymous`.');
const CIRCUIT = pathName('name', "A breaker's name.");
const MCP_TOOL = pathName('name', 'An upstream MCP tool of the registry (`<entry>.<name>` for an imported one).');
const ADMIN_NOTE = 'With no `auth.adminToken` configured, every admin route answers `404 not_found`.';

/** `/v1/admin/...`, for operators with the admin token. */
export const ADMIN_ROUTES: RouteDoc[] = [
  {
    group: 'admin',
    method: 'get',
    path: '/v1/admin/containment/{tenant}',
    operationId: 'readContainment',
    tag: 'admin',
    summary: "A tenant's containment snapshot",
    description: `404 for a tenant that never had one. ${ADMIN_NOTE}`,
    auth: 'admin',
    parameters: [TENANT],
    answer: { description: 'The snapshot.', content: { 'application/json': 'ContainmentSnapshot' } },
    errors: [400, 401, 404, 500, 503],
  },
  {
    group: 'admin',
    method: 'put',
    path: '/v1/admin/containment/{tenant}',
    operationId: 'setContainment',
    tag: 'admin',
    summary: "Set a tenant's containment",
    description: `Calls routed from now on follow it; calls under way do not move. ${ADMIN_NOTE}`,
    auth: 'admin',
    parameters: [TENANT],
    body: { schema: 'ContainmentChange', required: true, description: '`posture` defaults to the configured one.' },
    answer: {
      description: 'The new snapshot, its `version` one higher than the last.',
      content: { 'application/json': 'ContainmentSnapshot' },
    },
    errors: [400, 401, 404, 413, 500, 503],
  },
  {
    group: 'admin',
    method: 'get',
    path: '/v1/admin/budgets/{tenant}',
    operationId: 'readBudget',
    tag: 'admin',
    summary: "A tenant's budget in the current period",
    description: ADMIN_NOTE,
    auth: 'admin',
    parameters: [TENANT],
    answer: { description: 'The current period.', content: { 'application/json': 'BudgetView' } },
    errors: [400, 401, 404, 500, 503],
  },
  {
    group: 'admin',
    method: 'get',
    path: '/v1/admin/mcp/tools/{name}',
    operationId: 'readMcpToolPin',
    tag: 'admin',
    summary: "An upstream MCP tool's pin: the approved definition, the one waiting, and what differs",
    description: `404 for a tool that is not pinned (not of kind mcp, or \`pinning: off\`). ${ADMIN_NOTE}`,
    auth: 'admin',
    parameters: [MCP_TOOL],
    answer: { description: 'The pin.', content: { 'application/json': 'McpToolPin' } },
    errors: [400, 401, 404, 500, 503],
  },
  {
    group: 'admin',
    method: 'post',
    path: '/v1/admin/mcp/tools/{name}/approve',
    operationId: 'approveMcpTool',
    tag: 'admin',
    summary: "Approve an upstream MCP tool's new definition",
    description:
      'Every replica serves the tool with it from its next check of the store (at once here; on another, at its ' +
      'next refused call or within 5 s). 409 `tool_changed` when `sha256` names another definition than the one ' +
      `waiting; 409 \`invalid_request\` for a tool the config pins (change the config). ${ADMIN_NOTE}`,
    auth: 'admin',
    parameters: [MCP_TOOL],
    body: { schema: 'McpToolApprovalRequest', required: false, description: 'No body approves whatever waits.' },
    answer: { description: 'What was approved, and what changed.', content: { 'application/json': 'McpToolApproval' } },
    errors: [400, 401, 404, 409, 413, 500, 503],
  },
  {
    // Mounted with `GET /v1/circuits` by CircuitBreakerModule: the `circuits` switch, not `admin`.
    group: 'circuits',
    method: 'get',
    path: '/v1/admin/circuits',
    operationId: 'listAllCircuits',
    tag: 'admin',
    summary: 'Every breaker: state, rolling-window counts and every tenant refused on its own',
    description: `What \`GET /v1/circuits\` shows a tenant of its own, for every tenant. ${ADMIN_NOTE}`,
    auth: 'admin',
    answer: { description: 'The breakers by name.', content: { 'application/json': 'Circuits' } },
    errors: [401, 404, 500],
  },
  {
    // Mounted with `GET /v1/events` by the events routes: the `events` switch, not `admin`.
    group: 'events',
    method: 'get',
    path: '/v1/admin/events',
    operationId: 'listAllEvents',
    tag: 'admin',
    summary: "Every tenant's newest calls and every transition, newest last",
    description: `The ledger as it is, unfiltered. ${ADMIN_NOTE}`,
    auth: 'admin',
    parameters: [EVENTS_LIMIT],
    answer: { description: 'Fixed fields only.', content: { 'application/json': 'Events' } },
    errors: [400, 401, 404, 500],
  },
  {
    group: 'circuits',
    method: 'post',
    path: '/v1/admin/circuits/{name}/open',
    operationId: 'openCircuit',
    tag: 'admin',
    summary: 'Hold a circuit open until it is closed by hand',
    description: `It does not half-open on its own. ${ADMIN_NOTE}`,
    auth: 'admin',
    parameters: [CIRCUIT],
    answer: { description: 'The circuit now.', content: { 'application/json': 'CircuitAdminAnswer' } },
    errors: [401, 404, 500],
  },
  {
    group: 'circuits',
    method: 'post',
    path: '/v1/admin/circuits/{name}/close',
    operationId: 'closeCircuit',
    tag: 'admin',
    summary: 'Close a circuit, with an empty window',
    description: ADMIN_NOTE,
    auth: 'admin',
    parameters: [CIRCUIT],
    answer: { description: 'The circuit now.', content: { 'application/json': 'CircuitAdminAnswer' } },
    errors: [401, 404, 500],
  },
];
