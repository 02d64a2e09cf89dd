// The worked example on /docs/agents/ is read from the very file a test runs (test/mcp-example.test.ts).
import { readFileSync } from 'node:fs';

export default {
  mcpExample: readFileSync(new URL('./examples/mcp-pay.mjs', import.meta.url), 'utf8'),
};
