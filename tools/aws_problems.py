"""What an AWS SDK error means for an operator, in one line: credentials expired or refused, an action denied (and what
the identity needs), AWS out of reach, an API error; anything else stays a bug, with its traceback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

# What AWS answers when the caller's credentials are no longer (or never were) good, when it denies the caller an
# action, by service: STS and IAM say ExpiredToken, JSON services ExpiredTokenException, EC2 RequestExpired or
# AuthFailure, IAM-style services AccessDenied, EC2 UnauthorizedOperation, EKS and CloudWatch AccessDeniedException.
_EXPIRED = {"ExpiredToken", "ExpiredTokenException", "RequestExpired", "TokenRefreshRequired"}
_NOT_ACCEPTED = {
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "SignatureDoesNotMatch",
    "InvalidSignatureException",
    "AuthFailure",
}
_DENIED = {
    "AccessDenied",
    "AccessDeniedException",
    "UnauthorizedOperation",
    "UnauthorizedException",
    "AuthorizationError",
    "Forbidden",
}
_LOG_IN = "log in to the account (`aws sso login`, or set AWS_PROFILE or the AWS_* keys) and run the command again"
# What an operator command denied an action needs; a command another identity runs says its own (`needs`).
NEEDS_DEPLOYER = (
    "it needs the deployer's policies, or to move traffic the traffic operator's (policies/README.md); and, for what "
    "reads a cluster (readiness, the teardown), a cluster admin access entry"
)


def error_code(err: BaseException) -> str:
    """An AWS API error's code (`ResourceNotFoundException`, `AccessDenied`); empty for any other error."""
    response = getattr(err, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


def aws_problem(err: BaseException, *, needs: str = NEEDS_DEPLOYER) -> str | None:
    """One line for an operator when err is an AWS SDK error (credentials, access, network, an API error); None for
    anything else, which stays a bug with its traceback. botocore is imported only here, once such an error exists.
    needs: what the identity needs, said after a denial."""
    if not type(err).__module__.startswith("botocore"):
        return None
    from botocore import exceptions as sdk  # lazy: loaded once an SDK error exists, never for --help

    said = " ".join(str(err).split())
    if isinstance(err, sdk.ClientError):
        code = error_code(err)
        message = " ".join(str(err.response.get("Error", {}).get("Message", "")).split())[:300]
        operation = err.operation_name
        if code in _EXPIRED:
            return f"the AWS credentials have expired ({operation}: {code}): {_LOG_IN}"
        if code in _NOT_ACCEPTED:
            return f"AWS does not accept these credentials ({operation}: {code}: {message}): {_LOG_IN}"
        if code in _DENIED:
            return f"AWS denied {operation} to this identity ({code}: {message}): {needs}"
        return f"AWS {operation} failed ({code}: {message})"
    if isinstance(err, sdk.NoCredentialsError | sdk.PartialCredentialsError | sdk.ProfileNotFound):
        return f"no usable AWS credentials ({said}): {_LOG_IN}"
    if isinstance(err, sdk.SSOError | sdk.TokenRetrievalError | sdk.CredentialRetrievalError):
        return f"the AWS login has expired or cannot be refreshed ({said}): {_LOG_IN}"
    if isinstance(err, sdk.ConnectionError | sdk.HTTPClientError):
        return f"cannot reach AWS ({said}): check the network, the region and AWS_ENDPOINT_URL if one is set"
    if isinstance(err, sdk.NoRegionError):
        return f"{said}: set the project's `region` or AWS_REGION"
    return f"the AWS SDK failed ({type(err).__name__}: {said})"


@contextmanager
def aws_errors_as(error: Callable[[str], Exception], *, needs: str = NEEDS_DEPLOYER) -> Iterator[None]:
    """Inside, an AWS SDK error becomes error(its operator's line, aws_problem; needs: what a denied identity needs):
    a command that has changed something says what is in place, or one that must not guess says why it stops. Anything
    else passes through unchanged."""
    try:
        yield
    except Exception as err:
        said = aws_problem(err, needs=needs)
        if said is None:
            raise
        raise error(said) from None
