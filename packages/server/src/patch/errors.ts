/**
 * The `Status` errors kube-apiserver answers when a patch cannot be applied
 * (`k8s.io/apiserver/pkg/endpoints/handlers/patch.go`).
 *
 * @internal
 */
import { ApiError } from 'kubeloop/api';

/**
 * 422 as built by `errors.NewGenericServerResponse(422, …)`: the apiserver drops the underlying
 * error text, so every failing JSON patch operation (and a list of lists in a strategic merge
 * patch) reads the same.
 */
export function patchUnprocessable(): ApiError {
  return new ApiError({
    code: 422,
    reason: 'Invalid',
    message: 'the server rejected our request due to an error in our request',
    details: {},
  });
}

/** 400 BadRequest with the decoder's or patch library's message. */
export function patchBadRequest(message: string): ApiError {
  return ApiError.badRequest(message);
}

/**
 * An error the apiserver does not translate (a plain Go `error` reaching `ErrorToAPIStatus`):
 * 500 with no reason and the bare message, such as
 * `map: map[image:nginx] does not contain declared merge key: name`.
 */
export function patchInternal(message: string): ApiError {
  return new ApiError({ code: 500, message });
}
