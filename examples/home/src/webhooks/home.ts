/**
 * The webhooks of Home (kubebuilder's `internal/webhook/v1/home_webhook.go`):
 * the API server calls them on each write of a Home, before storing it. `kubeloop dev`
 * registers them with the local control plane; `kubeloop generate` writes their configurations
 * (`config/webhook`) and the certificate they are served with (`config/certmanager`).
 */
import { defaulter, fieldErrors, type ValidationResult, validator } from 'kubeloop/webhook';
import { Home } from '../api/ajd/v1/home.js';

/**
 * Defaults a Home on create and update (controller-runtime's `CustomDefaulter`): change the
 * object in place; the API server gets the minimal JSON Patch. It runs before the schema is
 * checked, so it may fill in a field the schema requires.
 *
 * - The owner is the user who creates the Home — what no schema default can know. An update
 *   that leaves the owner out (a `kubectl apply` of the original file) keeps the old one.
 * - A room without a floor is on the ground floor (0).
 * - A Home without `floors` has as many as its rooms need.
 */
export const homeDefaulter = defaulter(Home, (home, { operation, request, user }) => {
  const old = request.oldObject as Home | undefined;
  home.spec.owner ??=
    operation === 'UPDATE' && old?.spec.owner !== undefined ? old.spec.owner : user.username;
  for (const room of home.spec.rooms) room.floor ??= 0;
  home.spec.floors ??= Math.max(0, ...home.spec.rooms.map((r) => r.floor ?? 0)) + 1;
});

/**
 * Validates a Home on create, update and delete (controller-runtime's `CustomValidator`):
 * answer nothing to admit it, `{ warnings }` to admit it with warnings, `{ errors }` to refuse it
 * with a 422 that kubectl prints as it prints schema errors.
 */
export const homeValidator = validator(Home, {
  create: (home) => checkHome(home),
  update: (old, home) => {
    const result = checkHome(home);
    if (old.spec.owner !== undefined && home.spec.owner !== old.spec.owner)
      return {
        ...result,
        errors: [
          ...(result.errors ?? []),
          fieldErrors.invalid('spec.owner', home.spec.owner, 'field is immutable'),
        ],
      };
    return result;
  },
  delete: (home) =>
    home.spec.locked
      ? { errors: [fieldErrors.forbidden('spec.locked', 'a locked Home cannot be deleted: unlock it first')] }
      : undefined,
});

/**
 * The rules homeValidator applies on create and update, those the schema cannot state: each
 * room named once, every room below the Home's floors. A room without an area is admitted with
 * a warning (the status's total area leaves it out).
 */
function checkHome(home: Home): ValidationResult {
  const errors: NonNullable<ValidationResult['errors']>[number][] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  home.spec.rooms.forEach((room, i) => {
    if (seen.has(room.name)) errors.push(fieldErrors.duplicate(`spec.rooms[${i}].name`, room.name));
    seen.add(room.name);
    if (home.spec.floors !== undefined && (room.floor ?? 0) >= home.spec.floors)
      errors.push(
        fieldErrors.invalid(
          `spec.rooms[${i}].floor`,
          room.floor,
          `must be below spec.floors (${home.spec.floors})`,
        ),
      );
    if (room.area === undefined) warnings.push(`room "${room.name}" has no area: status.area leaves it out`);
  });
  return { errors, warnings };
}

// +kubeloop:scaffold:webhook

/** Every webhook of this file (`src/webhooks.ts` registers them). */
export const webhooks = [
  homeDefaulter,
  homeValidator,
  // +kubeloop:scaffold:webhooks
];
