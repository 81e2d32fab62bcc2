// The SDK's own tests: node --test, no Wasm, no dependencies.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import {
  AdmissionResponse,
  JsonPatch,
  allow,
  config,
  diff,
  forbidden,
  getObject,
  listObjects,
  log,
  notFound,
  pointer,
  runAdmission,
  watermark,
} from '../src/index.js';
import { decodeText, encodeText } from '../src/base64.js';
import { entrySource, importFrom, nodeTooOld, pinnedTools } from '../src/build.js';
import * as testing from '../src/testing.js';

const pod = testing.request('CREATE', 'v1', 'pods', 'Pod', 'ns', { metadata: { name: 'web' } });

test('forbidden reads like kube-apiserver', () => {
  const wire = JSON.parse(JSON.stringify(forbidden(pod, 'no')));
  assert.equal(wire.allowed, false);
  assert.deepEqual(wire.status, {
    status: 'Failure',
    message: 'pods "web" is forbidden: no',
    reason: 'Forbidden',
    code: 403,
    details: { name: 'web', group: '', kind: 'pods' },
  });
  const gen = testing.request('CREATE', 'apps/v1', 'deployments', 'Deployment', 'ns', { metadata: { generateName: 'web-' } });
  assert.equal(forbidden(gen, 'no').message, 'deployments.apps "web-" is forbidden: no');
  const del = { ...testing.request('DELETE', 'v1', 'pods', 'Pod', 'ns', {}), name: '' };
  assert.equal(forbidden(del, 'no').message, 'pods "Unknown" is forbidden: no');
});

test('not found names the group resource', () => {
  const r = notFound('apps', 'deployments', 'd');
  assert.equal(r.code, 404);
  assert.equal(r.message, 'deployments.apps "d" not found');
});

test('patch is base64 JSONPatch with warnings, audit annotations and causes', () => {
  const r = allow()
    .withPatch(new JsonPatch().add(['metadata', 'labels', 'a/b'], 'ü'))
    .withWarning('careful')
    .withAuditAnnotation('k', 'v');
  const wire = JSON.parse(JSON.stringify(r));
  assert.equal(wire.patchType, 'JSONPatch');
  assert.deepEqual(JSON.parse(decodeText(wire.patch)), [{ op: 'add', path: '/metadata/labels/a~1b', value: 'ü' }]);
  assert.deepEqual(wire.warnings, ['careful']);
  assert.deepEqual(wire.auditAnnotations, { k: 'v' });
  assert.equal(wire.patchOps, undefined);
  const plain = JSON.parse(JSON.stringify(allow().withPatch([])));
  assert.deepEqual(plain, { uid: '', allowed: true });
  const denied = AdmissionResponse.deny(422, 'Invalid', 'bad').withCause('FieldValueInvalid', 'spec.x', 'no');
  assert.deepEqual(denied.status.details.causes, [{ reason: 'FieldValueInvalid', message: 'no', field: 'spec.x' }]);
});

test('base64 matches Buffer on multi-byte text', () => {
  for (const s of ['', 'a', 'ab', 'abc', 'héllo wörld ✓', '[{"op":"add"}]']) {
    assert.equal(encodeText(s), Buffer.from(s, 'utf8').toString('base64'));
    assert.equal(decodeText(encodeText(s)), s);
  }
});

test('diff builds the patch from the old and the new object, and applies back', () => {
  const before = { metadata: { name: 'p', labels: { a: '1', 'x/y': '2' } }, spec: { containers: [{ name: 'c', image: 'i' }], gone: true } };
  const after = structuredClone(before);
  after.metadata.labels.a = '9';
  delete after.metadata.labels['x/y'];
  after.metadata.labels.new = 'n';
  after.spec.containers[0].image = 'j';
  delete after.spec.gone;
  after.spec.list = [1, 2];
  const ops = diff(before, after);
  assert.deepEqual(ops, [
    { op: 'remove', path: '/metadata/labels/x~1y' },
    { op: 'replace', path: '/metadata/labels/a', value: '9' },
    { op: 'add', path: '/metadata/labels/new', value: 'n' },
    { op: 'remove', path: '/spec/gone' },
    { op: 'replace', path: '/spec/containers/0/image', value: 'j' },
    { op: 'add', path: '/spec/list', value: [1, 2] },
  ]);
  assert.deepEqual(testing.applyPatch(before, allow().withChanges(before, after)), after);
  assert.deepEqual(diff(before, structuredClone(before)), []);
  assert.equal(pointer(['a~b', 'c/d']), '/a~0b/c~1d');
});

test('the fake host serves config, objects, selectors, watermarks and failures', () => {
  testing.reset();
  assert.deepEqual(config(), {});
  testing.setConfig({ seconds: 5 });
  assert.equal(config().seconds, 5);
  testing.setConfigText('not json');
  assert.throws(() => config(), /invalid plugin configuration/);
  const before = watermark('v1', 'pods');
  testing.putObject('v1', 'pods', { metadata: { name: 'a', namespace: 'x', labels: { app: 'web' } } });
  testing.putObject('v1', 'pods', { metadata: { name: 'b', namespace: 'x' } });
  testing.putObject('v1', 'pods', { metadata: { name: 'c', namespace: 'y', labels: { app: 'web' } } });
  assert.notEqual(watermark('v1', 'pods'), before);
  const names = (opts) => listObjects('v1', 'pods', opts).map((o) => o.metadata.name);
  assert.deepEqual(names({ namespace: 'x' }), ['a', 'b']);
  assert.deepEqual(names({ labelSelector: 'app=web' }), ['a', 'c']);
  assert.deepEqual(names({ labelSelector: '!app' }), ['b']);
  assert.deepEqual(names({ fieldSelector: 'metadata.name!=a' }), ['b', 'c']);
  assert.equal(getObject('v1', 'pods', 'x', 'a').metadata.name, 'a');
  assert.equal(getObject('v1', 'pods', 'x', 'zzz'), null);
  testing.removeObject('v1', 'pods', 'x', 'a');
  assert.equal(getObject('v1', 'pods', 'x', 'a'), null);
  testing.failReads('store down');
  assert.throws(() => getObject('v1', 'pods', 'x', 'b'), { message: 'store down' });
  log('warn', 'hello');
  assert.deepEqual(testing.logs(), [['warn', 'hello']]);
});

test('runAdmission answers with the uid and the echoed apiVersion; errors are thrown', async () => {
  const answer = JSON.parse(runAdmission(() => allow(), testing.reviewText(pod)));
  assert.deepEqual(answer, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'test-uid', allowed: true } });
  const later = JSON.parse(await runAdmission(async () => allow(), testing.reviewText(pod)));
  assert.equal(later.response.allowed, true);
  assert.throws(() => runAdmission(() => allow(), '{}'), /no request/);
  assert.throws(() => runAdmission(() => allow(), 'nope'), /invalid AdmissionReview/);
  assert.throws(() => runAdmission(() => ({ allowed: true }), testing.reviewText(pod)), /must return an AdmissionResponse/);
});

test('the generated entry imports the host interface of the ABI and exports the world function', () => {
  const src = entrySource('/p/policy.js', 'admission');
  assert.match(src, /from 'capstan:plugin\/host@0\.1\.0'/);
  assert.match(src, /export function review\(text\)/);
  assert.match(entrySource('/p/a.js', 'authorizer'), /export function authorize\(text\)/);
  assert.throws(() => entrySource('/p/a.js', 'nope'), /unknown world/);
});

test('the examples (and so `capstan plugin new`) pin exactly the build tools the SDK names', () => {
  for (const example of ['require-labels', 'unique-ingress-host']) {
    const url = new URL(`../../../examples/js/${example}/package.json`, import.meta.url);
    const pkg = JSON.parse(readFileSync(url, 'utf8'));
    assert.deepEqual(pkg.devDependencies, pinnedTools(), example);
  }
});

test('a missing build tool or an old node is named with how to get it', async () => {
  await assert.rejects(importFrom(tmpdir(), '@capstan/no-such-tool'), (e) => {
    assert.equal(e.code, 'CAPSTAN_MISSING_TOOL');
    assert.match(e.message, /^@capstan\/no-such-tool is missing: /);
    assert.match(e.message, /npm install --save-dev --save-exact @bytecodealliance\/componentize-js@0\.23\.0 @bytecodealliance\/jco@1\.34\.0 /);
    return true;
  });
  assert.equal(nodeTooOld('20.0.0'), null);
  assert.equal(nodeTooOld('24.1.0'), null);
  assert.match(nodeTooOld('18.19.0'), /^node 18\.19\.0 is too old: .* need node 20 or newer\. Install node 20\+ with npm from https:\/\/nodejs\.org/);
});
