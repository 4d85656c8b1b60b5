import { describe, expect, it } from 'vitest';
import { runAsNonRootError } from './security-context.js';

const pod = (sc: object = {}) => ({
  metadata: { name: 'op', namespace: 'sys', uid: 'u1' },
  spec: { securityContext: sc },
});

describe('runAsNonRoot, as the kubelet verifies it', () => {
  it('accepts a non-root runAsUser or image USER, and anything when it is not asked for', () => {
    expect(runAsNonRootError(pod(), { name: 'm' }, {})).toBeUndefined();
    expect(
      runAsNonRootError(pod({ runAsNonRoot: true }), { name: 'm' }, { user: '65532:65532' }),
    ).toBeUndefined();
    expect(
      runAsNonRootError(pod({ runAsNonRoot: true }), { name: 'm', securityContext: { runAsUser: 1000 } }, {}),
    ).toBeUndefined();
    // The container's setting overrides the pod's.
    expect(
      runAsNonRootError(
        pod({ runAsNonRoot: true }),
        { name: 'm', securityContext: { runAsNonRoot: false } },
        {},
      ),
    ).toBeUndefined();
  });

  it("refuses root with kube's words", () => {
    expect(runAsNonRootError(pod({ runAsNonRoot: true }), { name: 'm' }, {})).toBe(
      'container has runAsNonRoot and image will run as root (pod: "op_sys(u1)", container: m)',
    );
    expect(
      runAsNonRootError(pod({ runAsNonRoot: true, runAsUser: 0 }), { name: 'm' }, { user: '65532' }),
    ).toBe('container\'s runAsUser breaks non-root policy (pod: "op_sys(u1)", container: m)');
    expect(runAsNonRootError(pod({ runAsNonRoot: true }), { name: 'm' }, { user: 'app' })).toBe(
      'container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root (pod: "op_sys(u1)", container: m)',
    );
  });
});
