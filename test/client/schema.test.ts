// The checked-in client types (client/schema.ts) are those of the document the app
// serves: regenerated here the way `npm run client:generate` does, they match byte for
// byte. A route or schema change without a regeneration fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { SCHEMA_FILE, schemaSource, servedDocument } from '../../client/generate.ts';

it('client/schema.ts matches the served OpenAPI document (run npm run client:generate after changing routes)', async () => {
  const expected = await schemaSource(await servedDocument());
  const checkedIn = readFileSync(SCHEMA_FILE, 'utf8');
  if (checkedIn !== expected) {
    const a = checkedIn.split('\n');
    const b = expected.split('\n');
    const line = a.findIndex((text, i) => text !== b[i]);
    assert.fail(`client/schema.ts differs from the served document from line ${line + 1}:\n  checked in: ${a[line]}\n  served:     ${b[line]}\nrun npm run client:generate`);
  }
});
