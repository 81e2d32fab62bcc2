// Unit tests against the SDK's fake host: offline, no Wasm.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runAdmission } from '@capstan/plugin-sdk';
import * as testing from '@capstan/plugin-sdk/testing';
import { review } from '../src/require-labels.js';

const create = (obj) => review(testing.request('CREATE', 'apps/v1', 'deployments', 'Deployment', 'ns', obj));

test('rejects objects missing a listed label, in kube\'s Forbidden wording', () => {
  testing.reset();
  testing.setConfig({ labels: ['team', 'tier'] });
  const r = create({ metadata: { name: 'web', labels: { tier: 'front' } } });
  assert.equal(r.allowed, false);
  assert.equal(r.code, 403);
  assert.equal(r.message, 'deployments.apps "web" is forbidden: missing required label(s): team');
  assert.equal(testing.logs().length, 1);
});

test('allows labelled objects, and everything with an empty configuration', () => {
  testing.reset();
  testing.setConfig({ labels: ['team'] });
  assert.equal(create({ metadata: { name: 'web', labels: { team: 'a' } } }).allowed, true);
  testing.reset();
  assert.equal(create({ metadata: { name: 'web' } }).allowed, true);
});

test('deletes and subresources are not checked; a bad configuration fails', () => {
  testing.reset();
  testing.setConfig({ labels: ['team'] });
  const status = { ...testing.request('UPDATE', 'v1', 'pods', 'Pod', 'ns', { metadata: {} }), subResource: 'status' };
  assert.equal(review(status).allowed, true);
  assert.equal(review(testing.request('DELETE', 'v1', 'pods', 'Pod', 'ns', { metadata: {} })).allowed, true);
  testing.setConfig({ label: 'team' });
  assert.throws(() => create({}), /invalid plugin configuration/);
});

test('answers the AdmissionReview the host sends, as the component will', () => {
  testing.reset();
  testing.setConfig({ labels: ['team'] });
  const text = testing.reviewText(testing.request('CREATE', 'v1', 'configmaps', 'ConfigMap', 'ns', { metadata: { name: 'cm' } }));
  const answer = JSON.parse(runAdmission(review, text));
  assert.equal(answer.kind, 'AdmissionReview');
  assert.equal(answer.response.uid, 'test-uid');
  assert.equal(answer.response.status.message, 'configmaps "cm" is forbidden: missing required label(s): team');
  assert.equal(answer.response.status.reason, 'Forbidden');
});
