// llmrelay from Node (@grpc/grpc-js with @grpc/proto-loader): a Chat, a
// StreamTools printing its events as they arrive, an Embed, an Agent run with
// one client tool, and the typed details of an error (decoded with protobufjs
// from the vendored google/rpc protos). With LLMRELAY_ORDER_MODEL set it also
// sends a tool schema whose key order matters to that model
// (scripts/examples.sh checks what the provider received).
//
//   npm ci && LLMRELAY_ADDR=127.0.0.1:50051 node client.mjs
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

const protoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');
// keepCase: the proto's own field names; enums as their names; oneofs: a
// virtual field (`event`) naming the case that is set.
const loaderOptions = { includeDirs: [protoDir], keepCase: true, enums: String, longs: String, defaults: false, oneofs: true };
const pkg = grpc.loadPackageDefinition(protoLoader.loadSync('llmrelay/v1/gateway_service.proto', loaderOptions));

// host:port, or unix:///path/to.sock
const target = process.env.LLMRELAY_ADDR || '127.0.0.1:50051';
const client = new pkg.llmrelay.v1.GatewayService(target, grpc.credentials.createInsecure());
const deadline = () => ({ deadline: Date.now() + 30_000 });
const unary = (method, req) =>
  new Promise((resolve, reject) => client[method](req, deadline(), (err, resp) => (err ? reject(err) : resolve(resp))));
const user = (text) => [{ role: 'ROLE_USER', parts: [{ text }] }];

// The google.rpc.Status of a failed call, with its Any details unpacked.
const rpcRoot = new protobuf.Root();
rpcRoot.resolvePath = (_origin, target) => path.join(protoDir, target);
rpcRoot.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto'], { keepCase: true });
function errorDetails(err) {
  const [bin] = err.metadata?.get('grpc-status-details-bin') ?? [];
  if (!bin) return null;
  const status = rpcRoot.lookupType('google.rpc.Status').decode(bin);
  return status.details.map((any) => {
    const type = rpcRoot.lookupType(any.type_url.slice(any.type_url.lastIndexOf('/') + 1));
    return { type: type.fullName.slice(1), value: type.toObject(type.decode(any.value)) };
  });
}

async function main() {
  const chat = await unary('Chat', { model: 'builtin/echo', messages: user('hello') });
  console.log('chat:', chat.message.parts[0].text, '| tokens:', chat.meta.usage.total_tokens);

  // The tool's JSON Schema is plain JSON text.
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const tool = { name: 'get_weather', description: 'the weather in a city', parameters: JSON.stringify(schema) };
  await new Promise((resolve, reject) => {
    const call = client.StreamTools({ model: 'builtin/echo', messages: user('Paris'), tools: [tool] }, deadline());
    call.on('data', (ev) => {
      switch (ev.event) {
        case 'tool_call_delta':
          console.log('event: tool_call_delta', ev.tool_call_delta.call_id, JSON.stringify(ev.tool_call_delta.arguments_delta));
          break;
        case 'tool_call_done':
          console.log('event: tool_call_done', ev.tool_call_done.tool_call.name, ev.tool_call_done.tool_call.arguments);
          break;
        case 'end':
          console.log('event: end', ev.end.finish_reason);
          break;
        default:
          console.log('event:', ev.event);
      }
    });
    call.on('error', reject);
    call.on('end', resolve);
  });

  const emb = await unary('Embed', { model: 'builtin/embed', inputs: ['a', 'b'], dimensions: 4 });
  console.log('embed:', emb.embeddings.length, 'x', emb.embeddings[0].values.length);

  await agent();

  if (process.env.LLMRELAY_ORDER_MODEL) {
    // Keys in the order the model should fill them: a schema is text, so
    // the provider gets this order byte for byte (a Struct would not keep it).
    const ordered = JSON.stringify({ type: 'object', properties: { reasoning: { type: 'string' }, answer: { type: 'string' } }, required: ['reasoning', 'answer'] });
    await unary('Tools', { model: process.env.LLMRELAY_ORDER_MODEL, messages: user('6 times 7?'), tools: [{ name: 'reply', parameters: ordered }] });
    console.log('order: sent');
  }

  try {
    await unary('Chat', { model: 'no-such-model', messages: user('hi') });
    throw new Error('the call to an unknown model succeeded');
  } catch (err) {
    if (err.code === undefined) throw err;
    console.log('error:', grpc.status[err.code], err.details);
    const details = errorDetails(err);
    if (!details) throw new Error('no status details');
    for (const d of details) {
      if (d.type === 'google.rpc.ErrorInfo') console.log('  reason:', d.value.reason, d.value.domain, JSON.stringify(d.value.metadata));
      if (d.type === 'google.rpc.BadRequest') for (const v of d.value.field_violations) console.log('  field:', v.field, '-', v.description);
    }
  }
  client.close();
}

// An Agent run: the server calls the model and asks this client for the
// results of its tool, keyed by call_id, until the model answers.
function agent() {
  return new Promise((resolve, reject) => {
    const call = client.Agent(deadline());
    const parameters = JSON.stringify({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    call.write({ setup: { model: 'builtin/echo', messages: user('Lyon'), tools: [{ name: 'get_weather', parameters }], max_rounds: 3 } });
    call.on('data', (ev) => {
      if (ev.event === 'tool_call_request') {
        const req = ev.tool_call_request;
        const args = JSON.parse(req.arguments);
        console.log('agent: tool', req.name, req.call_id, JSON.stringify(args));
        call.write({ tool_result: { call_id: req.call_id, content: JSON.stringify({ city: args.city, sky: 'sunny' }) } });
      } else if (ev.event === 'end') {
        const last = ev.end.messages[ev.end.messages.length - 1];
        const text = last.parts.map((p) => p.text ?? '').join('');
        console.log('agent: end', ev.end.finish_reason, 'model calls:', ev.end.meta.model_calls, '| answer:', text);
        call.end();
      }
    });
    call.on('error', reject);
    call.on('end', resolve);
  });
}

main().catch((err) => {
  console.error('llmrelay node example:', err.message ?? err);
  process.exit(1);
});
