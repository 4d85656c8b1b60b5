/**
 * `--group` of `create api` and `create webhook`. As kubebuilder, an empty group is allowed (a
 * kind whose API group is the domain itself, e.g. `--group '' ` under `--domain mycompany.io`
 * gives `mycompany.io/v1`); otherwise it is a DNS-1123 label, prefixed to the domain.
 */
import { checkLabel } from '../scaffold/names.js';
import { required } from './prompt.js';

/** The group given (`''` kept: the domain is the API group), else asked (in a terminal), checked. */
export async function groupFlag(value: string | undefined): Promise<string> {
  if (value === '') return '';
  return checkLabel(
    '--group',
    await required(value, '--group', 'The group of the API (without the domain)', {
      placeholder: 'cache',
      validate: (v) => checkLabel('--group', v),
    }),
  );
}
