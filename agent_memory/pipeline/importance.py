"""Importance 0..1: a base by memory type plus rule boosts, clamped, with the reasons."""

from __future__ import annotations

import re

BASE = {"preference": 0.5, "fact": 0.5, "plan": 0.55, "task": 0.55, "event": 0.45}
BOOSTS: list[tuple[str, float, re.Pattern[str]]] = [
    ("health or allergy", 0.3, re.compile(
        r"\b(allerg\w*|asthma|diabet\w*|medication|pregnan\w*|surgery|disease|blood type)\b|"
        r"过敏|哮喘|糖尿病|药|怀孕|手术|病", re.I)),
    ("explicitly asked to remember", 0.25, re.compile(
        r"\b(remember|don't forget|keep in mind)\b|记住|别忘了|请记得", re.I)),
    ("date or deadline", 0.15, re.compile(
        r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}|deadline|due|by (monday|tuesday|wednesday|thursday|friday|"
        r"saturday|sunday|tomorrow)|next (week|month)|tomorrow|on (monday|tuesday|wednesday|thursday|friday|"
        r"saturday|sunday))\b|\d+月\d+[日号]|截止|下周|下个月|明天|后天|周[一二三四五六日天]", re.I)),
    ("money amount", 0.15, re.compile(
        r"[$€£¥]\s?\d|\b\d+(\.\d+)?\s?(dollars|usd|eur|euros|rmb|yuan|k)\b|\d+\s?(元|块|万)", re.I)),
    ("address or place", 0.1, re.compile(
        r"\b(live (in|at)|moved to|address|street|st\.|road|avenue|apartment|flat \d)\b|"
        r"住在|搬到|地址|路\d|号楼|小区", re.I)),
]


def importance(text: str, memory_type: str) -> tuple[float, list[str]]:
    value = BASE.get(memory_type, 0.5)
    reasons = [f"base {memory_type} {value:.2f}"]
    for name, boost, pattern in BOOSTS:
        if pattern.search(text):
            value += boost
            reasons.append(f"+{boost:.2f} {name}")
    value = round(min(1.0, max(0.0, value)), 2)
    return value, reasons
