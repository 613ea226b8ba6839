// The push stream's reference page (GET /docs/stream): the AsyncAPI document the service
// publishes at /api/v1/asyncapi.json, rendered as plain HTML by this page's own code
// (a full AsyncAPI renderer would add megabytes of bundle for a document of seven
// messages). Every channel with its messages, each message's payload as a table of
// fields, the operations, and the shared schemas the payloads refer to. Text from the
// document is only ever set as text, never parsed as HTML.
import './asyncapi.css';
import { getJson } from '../board/api.ts';

type Json = Record<string, any>;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (text !== undefined) element.textContent = text;
  if (className !== undefined) element.className = className;
  return element;
}

/** Paragraphs of a description; `code` spans become <code>. */
function prose(text: string | undefined): HTMLElement[] {
  if (text === undefined || text === '') return [];
  return text.split(/\n\n+/).map((paragraph) => {
    const p = el('p');
    paragraph.split('`').forEach((part, i) => p.append(i % 2 === 1 ? el('code', part) : document.createTextNode(part)));
    return p;
  });
}

/** '#/components/schemas/Clk' -> 'Clk'. */
function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}

function schemaLink(name: string): HTMLAnchorElement {
  const a = el('a', name);
  a.href = `#schema-${name}`;
  return a;
}

/** A short statement of a schema's type: const, enum, $ref, array of, with bounds. */
function typeOf(schema: Json): Node {
  const box = el('span');
  if (schema.$ref !== undefined) box.append(schemaLink(refName(schema.$ref)));
  else if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && schema.allOf[0].$ref !== undefined) box.append(schemaLink(refName(schema.allOf[0].$ref)));
  else if (schema.const !== undefined) box.append(el('code', JSON.stringify(schema.const)));
  else if (Array.isArray(schema.enum)) box.append(`${schema.type ?? ''} one of `, el('code', schema.enum.map(String).join(' | ')));
  else if (schema.type === 'array') box.append('array of ', schema.items === undefined ? 'any' : typeOf(schema.items));
  else box.append(Array.isArray(schema.type) ? schema.type.join(' | ') : String(schema.type ?? 'any'));
  const bounds: string[] = [];
  if (schema.minimum !== undefined) bounds.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined) bounds.push(`≤ ${schema.maximum}`);
  if (schema.minLength !== undefined) bounds.push(`length ≥ ${schema.minLength}`);
  if (schema.maxLength !== undefined) bounds.push(`length ≤ ${schema.maxLength}`);
  if (schema.maxItems !== undefined) bounds.push(`≤ ${schema.maxItems} items`);
  if (schema.default !== undefined) bounds.push(`default ${JSON.stringify(schema.default)}`);
  if (bounds.length > 0) box.append(` (${bounds.join(', ')})`);
  return box;
}

/** An object schema's fields as a table; other schemas as their type and description. */
function schemaTable(schema: Json): HTMLElement[] {
  const out: HTMLElement[] = [];
  const properties = schema.properties as Record<string, Json> | undefined;
  if (properties === undefined) {
    const line = el('p');
    line.append('Type: ', typeOf(schema));
    out.push(line);
    return out;
  }
  const required = new Set<string>(schema.required ?? []);
  const table = el('table', undefined, 'fields');
  const head = table.createTHead().insertRow();
  for (const title of ['field', 'type', 'required', 'description']) head.append(el('th', title));
  const body = table.createTBody();
  for (const [name, field] of Object.entries(properties)) {
    const row = body.insertRow();
    row.insertCell().append(el('code', name));
    row.insertCell().append(typeOf(field));
    row.insertCell().textContent = required.has(name) ? 'yes' : '';
    row.insertCell().textContent = field.description ?? '';
  }
  out.push(table);
  return out;
}

function messageSection(key: string, message: Json, schemas: Record<string, Json>): HTMLElement {
  const section = el('section', undefined, 'message');
  section.dataset.message = message.name ?? key;
  const title = el('h4');
  title.append(el('code', message.name ?? key));
  if (message.title !== undefined && message.title !== message.name) title.append(` · ${message.title}`);
  section.append(title, ...prose(message.summary));
  if (message.contentType !== undefined) section.append(el('p', `Content type: ${message.contentType}`, 'meta'));
  const payload = message.payload as Json | undefined;
  if (payload !== undefined) {
    const resolved = payload.$ref !== undefined ? (schemas[refName(payload.$ref)] ?? {}) : payload;
    const caption = el('p', 'Payload: ', 'meta');
    if (payload.$ref !== undefined) caption.append(schemaLink(refName(payload.$ref)));
    section.append(caption, ...prose(resolved.description), ...schemaTable(resolved));
  }
  return section;
}

function render(doc: Json): void {
  const root = document.getElementById('asyncapi')!;
  root.replaceChildren();
  root.dataset.state = 'rendered';
  const schemas = (doc.components?.schemas ?? {}) as Record<string, Json>;

  const header = el('header');
  const home = el('nav');
  const board = el('a', 'Live board');
  board.href = '/';
  const api = el('a', 'HTTP API reference');
  api.href = '/docs';
  const raw = el('a', 'AsyncAPI JSON');
  raw.href = '/api/v1/asyncapi.json';
  home.append(board, ' · ', api, ' · ', raw);
  header.append(home, el('h1', `${doc.info?.title ?? 'AsyncAPI'} ${doc.info?.version ?? ''}`), el('p', `AsyncAPI ${doc.asyncapi}`, 'meta'));
  root.append(header, ...prose(doc.info?.description));

  // The document names the default address (localhost:8080); the stream is on the host
  // and port that served this page, so that is the address shown, with the document's
  // own in the item's title.
  root.append(el('h2', 'Servers'));
  const servers = el('ul');
  const secure = location.protocol === 'https:';
  for (const [name, server] of Object.entries((doc.servers ?? {}) as Record<string, Json>)) {
    const item = el('li');
    item.dataset.server = name;
    const protocol = server.protocol === 'ws' ? (secure ? 'wss' : 'ws') : server.protocol === 'http' ? (secure ? 'https' : 'http') : String(server.protocol);
    item.title = `in the AsyncAPI document: ${server.protocol}://${server.host}`;
    item.append(el('code', `${protocol}://${location.host}`), ` (${name}): ${server.description ?? ''}`);
    servers.append(item);
  }
  root.append(servers);

  root.append(el('h2', 'Channels'));
  for (const [name, channel] of Object.entries((doc.channels ?? {}) as Record<string, Json>)) {
    const section = el('section', undefined, 'channel');
    section.dataset.channel = name;
    const title = el('h3');
    title.append(el('code', channel.address ?? name), ` · ${channel.title ?? name}`);
    section.append(title, ...prose(channel.description));
    for (const [key, message] of Object.entries((channel.messages ?? {}) as Record<string, Json>)) section.append(messageSection(key, message, schemas));
    root.append(section);
  }

  root.append(el('h2', 'Operations'));
  const operations = el('ul');
  for (const [name, operation] of Object.entries((doc.operations ?? {}) as Record<string, Json>)) {
    const item = el('li');
    item.append(el('code', name), ` (${operation.action} on ${refName(operation.channel?.$ref ?? '')}): ${operation.summary ?? ''}`);
    operations.append(item);
  }
  root.append(operations);

  root.append(el('h2', 'Schemas'));
  for (const [name, schema] of Object.entries(schemas)) {
    const section = el('section', undefined, 'schema');
    section.id = `schema-${name}`;
    section.append(el('h3', name), ...prose(schema.description), ...schemaTable(schema));
    root.append(section);
  }
}

getJson<Json>('/api/v1/asyncapi.json').then(render, (error: unknown) => {
  const root = document.getElementById('asyncapi')!;
  root.dataset.state = 'failed';
  root.replaceChildren(el('p', `The AsyncAPI document could not be loaded: ${error instanceof Error ? error.message : String(error)}`, 'error'));
});
