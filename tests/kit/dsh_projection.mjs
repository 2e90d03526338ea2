// Runs DSH's own Agent Teams projection (lib/types/projection.js of
// @deepseek-ai/dsh-experimental-agent-team) over one lead log's events.
// argv[2]: the unpacked package's directory. stdin: JSON lines, the first
// {"rootId": ...}, then one {"type", "data"} per event in log order.
// stdout: the projected state as JSON (its "failure" set when DSH refuses the team).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const packageDir = process.argv[2];
const url = pathToFileURL(join(packageDir, 'lib', 'types', 'projection.js')).href;
const { teamProjectionDefinition } = await import(url);
const lines = readFileSync(0, 'utf8').split('\n').filter(line => line.length > 0);
const { rootId } = JSON.parse(lines[0]);
let state = teamProjectionDefinition.init({ id: rootId });
for (const line of lines.slice(1)) {
  state = teamProjectionDefinition.apply(state, JSON.parse(line));
}
process.stdout.write(JSON.stringify(state));
