import { conversion } from 'kubeloop/webhook';
import { FooBar } from '../api/test/v2/foobar.js';

/**
 * How FooBar's versions convert, hub and spoke as controller-runtime does it: v2, the stored
 * version, is the hub; v1 says how to go to v2 and back. The API server calls it (the
 * conversion webhook at `/convert`) whenever a client reads or writes a version other than
 * the stored one: a FooBar created at v1 is stored at v2, and read at either. Nothing is lost
 * either way (`expectRoundTrip` checks it in the tests).
 */
export const fooBarConversion = conversion(FooBar, {
  hub: 'v2',
  spokes: {
    v1: {
      toHub: (v1) => ({
        metadata: v1.metadata,
        spec: { target: { name: v1.spec.target, ...(v1.spec.type !== undefined && { type: v1.spec.type }) } },
        ...(v1.status !== undefined && { status: v1.status }),
      }),
      fromHub: (v2) => ({
        metadata: v2.metadata,
        spec: {
          target: v2.spec.target.name,
          ...(v2.spec.target.type !== undefined && { type: v2.spec.target.type }),
        },
        ...(v2.status !== undefined && { status: v2.status }),
      }),
    },
  },
});

// +kubeloop:scaffold:webhook

/** Every webhook of this file (`src/webhooks.ts` registers them). */
export const webhooks = [
  fooBarConversion,
  // +kubeloop:scaffold:webhooks
];
