"""Pluggable analysis of a shift's window (issue 47, item 2): besides the load balancer's numbers (tools/shift/gate.py),
what each application's team already watches, as `traffic.shift.analysis` and `applications.<name>.analysis` configure
it (model/config/analysis.py). One module per provider, each failing closed and saying its value and threshold:

    verdict.py      what every provider returns (Verdict), the window, and the shared fail-closed judgement of numbers
    alarms.py       CloudWatch alarms, metric and composite, in ALARM at any moment of the window
    metric_math.py  CloudWatch metric math: every application's queries in one GetMetricData call per poll
    prometheus.py   Prometheus-compatible instant queries, SigV4-signed for Amazon Managed Service for Prometheus
    synthetic.py    GET requests through an application's preview or public host
    http.py         the HTTP opener the last two share (a test's own in tests)
    window.py       judge_window: every provider of every application for one window
"""
