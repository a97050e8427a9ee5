"""ACM certificate for a zone's apex and `*.<zone>`, DNS-validated with records in that zone."""

from __future__ import annotations

from cdktf import ITerraformDependable, TerraformIterator, Token
from cdktf_cdktf_provider_aws.acm_certificate import AcmCertificate
from cdktf_cdktf_provider_aws.acm_certificate_validation import AcmCertificateValidation
from cdktf_cdktf_provider_aws.route53_record import Route53Record
from constructs import Construct


class Certificate(Construct):
    def __init__(self, scope: Construct, id_: str, *, zone_name: str, zone_id: str, delegation: ITerraformDependable) -> None:
        super().__init__(scope, id_)
        cert = AcmCertificate(
            self,
            "cert",
            domain_name=zone_name,
            subject_alternative_names=[f"*.{zone_name}"],
            validation_method="DNS",
            key_algorithm="RSA_2048",
            # A replacement is issued before the old one is released from the ALB listeners.
            lifecycle={"create_before_destroy": True},
        )
        # The provider's documented idiom, iterating the set itself. (cdktf's from_complex_list
        # wraps it in tolist(), which is unknown until the certificate exists, so for_each fails.)
        by_domain = f"${{{{ for o in {cert.fqn}.domain_validation_options : o.domain_name => o }}}}"
        options = TerraformIterator.from_map(Token.as_any_map(by_domain))
        records = Route53Record(
            self,
            "validation",
            for_each=options,
            zone_id=zone_id,
            name=options.get_string("resource_record_name"),
            type=options.get_string("resource_record_type"),
            records=[options.get_string("resource_record_value")],
            ttl=60,
            # The apex and the wildcard share one validation record.
            allow_overwrite=True,
        )
        validation = AcmCertificateValidation(
            self,
            "validation-wait",
            certificate_arn=cert.arn,
            validation_record_fqdns=Token.as_list(TerraformIterator.from_resources(records).pluck_property("fqdn")),
            # ACM can only see the records once the parent zone delegates to the sub-zone.
            depends_on=[delegation],
        )
        # Read from the validation, so consumers of the ARN wait until the certificate is issued.
        self.certificate_arn = validation.certificate_arn
