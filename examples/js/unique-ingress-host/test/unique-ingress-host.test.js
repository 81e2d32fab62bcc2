// Unit tests against the SDK's fake host: offline, no Wasm.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as testing from '@capstan/plugin-sdk/testing';
import { review } from '../src/unique-ingress-host.js';

const ingress = (namespace, name, hosts) => ({
  apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
  metadata: { name, namespace },
  spec: { rules: hosts.map((host) => ({ host })) },
});
const call = (operation, obj) =>
  review(testing.request(operation, 'networking.k8s.io/v1', 'ingresses', 'Ingress', obj.metadata.namespace, obj));

test('a host held in another namespace is refused, naming its holder', () => {
  testing.reset();
  testing.putObject('networking.k8s.io/v1', 'ingresses', ingress('a', 'shop', ['shop.example.com']));
  const r = call('CREATE', ingress('b', 'copy', ['', 'other.example.com', 'shop.example.com']));
  assert.equal(r.allowed, false);
  assert.equal(r.code, 403);
  assert.equal(r.message, 'ingresses.networking.k8s.io "copy" is forbidden: host "shop.example.com" is already used by ingress a/shop');
});

test('new hosts, and an Ingress keeping its own host, are allowed', () => {
  testing.reset();
  testing.putObject('networking.k8s.io/v1', 'ingresses', ingress('a', 'shop', ['shop.example.com']));
  assert.equal(call('CREATE', ingress('b', 'blog', ['blog.example.com'])).allowed, true);
  assert.equal(call('UPDATE', ingress('a', 'shop', ['shop.example.com'])).allowed, true);
  assert.equal(call('CREATE', ingress('b', 'default-backend', [])).allowed, true);
});

test('a failed read fails the call, so the failure policy decides', () => {
  testing.reset();
  testing.failReads('the cache is not ready');
  assert.throws(() => call('CREATE', ingress('b', 'x', ['x.example.com'])), /the cache is not ready/);
});
