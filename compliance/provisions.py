"""What a notice of violation can cite: each law's prohibitions and duties that a town
enforces, as data — the section, a short title, the law's own words (verbatim; a test finds
each quotation in the text in ``shared/reference``), whether the section *number* is
inferred, and the remedial measures typical for that provision (the letter's default for
§ 148-18A(4) and for the requirements of § 218-44A(1) / § 148-32A(1); the SMO may change
them per notice).

Section numbers. The reference texts carry no section headings; subsection letters and
numbers (A, (1), (a)) are the text's own. A section number is *given* (``inferred=False``)
when the text itself refers to that section by number for that content:

* Ramapo ch. 218: § 218-34 (definitions), § 218-36 (prohibitions: "except as exempted in
  § 218-36"), § 218-37 (failing individual sewage treatment systems), § 218-38 (activities
  contaminating stormwater);
* Schenectady ch. 148 Art. I: § 148-5 (definitions), § 148-6 (SWPPP review), § 148-11
  (design and performance standards), § 148-17 (fees), § 148-18A (notice of violation);
* Schenectady ch. 148 Art. II: § 148-20 (definitions), § 148-24 (prohibitions), § 148-26
  (activities contaminating stormwater).

Every other number is counted between two given ones, one section per unlettered block
of the text (``inferred=True``): check it against the town's published code before the
letter goes out (the issue form marks it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Provision:
    """One prohibition or duty of a law, citable in a notice of violation."""

    key: str                  # "site_inspections": unique within its law
    section: str              # "148-13B": section and subsection, without the "§"
    title: str                # "Site inspections every seven days and after storms"
    text: str                 # the law's words, verbatim
    remedies: tuple[str, ...]  # remedial measures typical for a violation of it
    inferred: bool = False    # the section number is counted, not given by the text

    @property
    def number(self) -> str:
        """The section number alone ("148-13" of "148-13B(1)")."""
        head = self.section.split("(")[0]
        return head.rstrip("ABCDEFGHIJ")


# -- Town of Ramapo, ch. 218 (illicit discharges) -------------------------------------------------
RAMAPO: tuple[Provision, ...] = (
    Provision("illicit_discharge", "218-36A", "Prohibition of illegal discharges",
              "No person shall discharge or cause to be discharged into the MS4 any materials other than stormwater "
              "except as provided in Subsection A(1).",
              ("Stop the discharge at once.", "Find its source and disconnect it from the storm sewer.",
               "Clean out the material discharged from the storm sewer and restore the affected property.")),
    Provision("dye_test_notice", "218-36A(3)", "Dye testing without prior written notification",
              "Dye testing in compliance with applicable state and local laws is an allowable discharge but requires "
              "a written notification to the SMO prior to the time of the test.",
              ("Notify the SMO in writing before any further dye test.",)),
    Provision("illicit_connection", "218-36B(1)", "Prohibition of illicit connections",
              "The construction, use, maintenance or continued existence of any illicit connections to the MS4 is "
              "prohibited.",
              ("Disconnect the illicit connection from the storm sewer (plug or reroute it to the sanitary sewer under "
               "a plumbing permit).", "Give the SMO proof of the disconnection (a dye test or camera inspection).")),
    Provision("failing_septic", "218-37", "Failing individual sewage treatment system",
              "No persons shall operate a failing individual sewage treatment system in areas tributary to the "
              "municipality's MS4.",
              ("Stop the overflow: have the septic tank pumped by a licensed septage hauler.",
               "Repair or replace the system in accordance with 10 NYCRR Appendix 75A and the Rockland County "
               "Sanitary Code.")),
    Provision("contaminating_activity", "218-38C", "Activities contaminating stormwater",
              "Upon notification to a person that he or she is engaged in activities that cause or contribute to "
              "violations of the municipality's MS4 SPDES permit authorization, that person shall take all reasonable "
              "actions to correct such activities such that he or she no longer causes or contributes to violations "
              "of the municipality's MS4 SPDES permit authorization.",
              ("Correct the activity named in this notice so that it no longer contributes pollutants to the storm "
               "sewer.",)),
    Provision("commercial_bmps", "218-39A(1)", "Commercial or industrial BMPs and their records",
              "The owner or operator of a commercial or industrial establishment shall provide, at its own expense, "
              "reasonable protection from accidental discharge of prohibited materials or other wastes into the MS4 "
              "through the use of structural and nonstructural BMPs and shall keep and maintain records and logs of "
              "the inspection and maintenance of the BMPs and make available for inspection by the MS4 for a period "
              "of three years.",
              ("Install and maintain BMPs that protect the storm sewer from accidental discharges.",
               "Keep the BMP inspection and maintenance logs and make them available to the SMO."), inferred=True),
    Provision("required_bmps", "218-39A(2)", "BMPs required of a source of an illicit discharge",
              "Any person responsible for a property which is, or may be, the source of an illicit discharge or an "
              "activity contaminating stormwater as defined in § 218-38 may be required to implement, at said "
              "person's expense, additional structural and nonstructural BMPs to reduce or eliminate the source of "
              "the pollutant(s) to the MS4",
              ("Implement the structural and nonstructural BMPs this notice requires, and keep their records.",),
              inferred=True),
    Provision("septic_maintenance", "218-39B", "Individual sewage treatment systems under special conditions",
              "the owner or operator of such individual sewage treatment systems shall be required to:",
              ("Inspect the septic tank and have it pumped as § 218-39B(1) requires.",
               "Repair or replace the system as § 218-39B(2) requires, with a certificate of compliance."),
              inferred=True),
    Provision("access_reinstated", "218-40B", "MS4 access reinstated without approval",
              "A person commits a violation if the person reinstates MS4 access to property terminated pursuant to "
              "this section without the prior approval of the SMO.",
              ("Disconnect the reinstated access at once.", "Petition the SMO before any reconnection."),
              inferred=True),
    Provision("spdes_permit", "218-41", "Industrial or construction activity SPDES permit",
              "Any person subject to an industrial or construction activity SPDES stormwater discharge permit shall "
              "comply with all provisions of such permit.",
              ("Comply with the SPDES permit and give the SMO proof of compliance in a form acceptable to the NYS "
               "DEC.",), inferred=True),
    Provision("access", "218-42B", "Access for inspection, sampling and records",
              "All persons shall allow the SMO ready access to all parts of the property for the purposes of "
              "inspection, sampling, examination and copying of records as may be required to implement this "
              "article.",
              ("Allow the SMO access to the property on the date the SMO sets.",), inferred=True),
    Provision("monitoring_equipment", "218-42D", "Monitoring equipment maintained and calibrated",
              "The property's sampling and monitoring equipment shall be maintained at all times in a safe and proper "
              "operating condition by the person at his own expense. All devices used to measure stormwater flow and "
              "quality shall be calibrated to ensure their accuracy.",
              ("Repair the sampling and monitoring equipment and have it calibrated; send the SMO the calibration "
               "record.",), inferred=True),
    Provision("access_denied", "218-42E", "Unreasonable delay or denial of access",
              "Unreasonable delay in allowing the municipality access to a property subject to this article is a "
              "violation of this article.",
              ("Allow the municipality access to the property on the date the SMO sets.",), inferred=True),
    Provision("release_cleanup", "218-43", "Release: discovery, containment and cleanup",
              "said person shall take all necessary steps to ensure the discovery, containment, and cleanup of such "
              "release.",
              ("Contain the release and clean it up, including the storm sewer it reached.",), inferred=True),
    Provision("release_hazardous", "218-43", "Release of hazardous materials not notified",
              "In the event of such a release of hazardous materials said person shall immediately notify emergency "
              "response agencies, the municipality, and the responsible MS4 of the occurrence via emergency dispatch "
              "services.",
              ("Notify every future release of hazardous materials at once via emergency dispatch services.",),
              inferred=True),
    Provision("release_notice", "218-43", "Release of nonhazardous materials not notified",
              "In the event of a release of nonhazardous materials, said person shall notify the municipality and "
              "responsible MS4 in person or by telephone or facsimile no later than the next business day.",
              ("Report the release to the municipality now, and every future release by the next business day.",),
              inferred=True),
    Provision("release_written", "218-43", "Release notification not confirmed in writing",
              "Notifications in person or by telephone shall be confirmed by written notice addressed and mailed to "
              "the municipality within three business days of the telephone notice.",
              ("Mail the municipality the written confirmation of the release.",), inferred=True),
    Provision("release_record", "218-43", "On-site record of a release",
              "If the discharge of prohibited materials emanates from a commercial or industrial establishment, the "
              "owner or operator of such establishment shall also retain an on-site written record of the discharge "
              "and the actions taken to prevent its recurrence.",
              ("Write the record of the discharge and the actions taken to prevent its recurrence, and keep it on "
               "site for three years.",), inferred=True),
)

# -- City of Schenectady, ch. 148 Art. II (illicit discharges) ----------------------------------
SCHENECTADY_II: tuple[Provision, ...] = (
    Provision("illicit_discharge", "148-24A", "Prohibition of illegal discharges",
              "No person shall discharge or cause to be discharged into the MS4 any materials other than stormwater "
              "except as provided in Subsection A(1).",
              ("Stop the discharge at once.", "Find its source and disconnect it from the storm sewer.",
               "Clean out the material discharged from the storm sewer and restore the affected property.")),
    Provision("dye_test_notice", "148-24A(3)", "Dye testing without prior notification",
              "Dye testing in compliance with applicable state and local laws is an allowable discharge, but requires "
              "notification to the SMO prior to the time of the test.",
              ("Notify the SMO before any further dye test.",)),
    Provision("illicit_connection", "148-24B(1)", "Prohibition of illicit connections",
              "The construction, use, maintenance or continued existence of illicit connections to the MS4 is "
              "prohibited.",
              ("Disconnect the illicit connection from the storm sewer (plug or reroute it to the sanitary sewer under "
               "a plumbing permit).", "Give the SMO proof of the disconnection (a dye test or camera inspection).")),
    Provision("sewage_connection", "148-24B(3)", "A line conveying sewage connected to the MS4",
              "A person is considered to be in violation of this article if the person connects a line conveying "
              "sewage to the municipality's MS4 or allows such a connection to continue.",
              ("Disconnect the sewage line from the storm sewer and connect it to the sanitary sewer under a plumbing "
               "permit.", "Clean out the storm sewer downstream of the connection.")),
    Provision("failing_septic", "148-25", "Failing individual sewage treatment system",
              "No persons shall operate a failing individual sewage treatment system in areas tributary to the "
              "municipality's MS4.",
              ("Stop the overflow: have the septic tank pumped by a licensed septage hauler.",
               "Repair or replace the system in accordance with 10 NYCRR Appendix 75-A (§ 148-27B)."),
              inferred=True),
    Provision("contaminating_activity", "148-26B", "Activities contaminating stormwater",
              "Upon notification to a person that he or she is engaged in activities that cause or contribute to "
              "violations of the municipality's MS4 SPDES permit authorization, that person shall take all reasonable "
              "actions to correct such activities such that he or she no longer causes or contributes to violations "
              "of the municipality's MS4 SPDES permit authorization.",
              ("Correct the activity named in this notice so that it no longer contributes pollutants to the storm "
               "sewer.",)),
    Provision("commercial_bmps", "148-27A(1)", "Commercial or industrial BMPs",
              "The owner or operator of a commercial or industrial establishment shall provide, at his or her own "
              "expense, reasonable protection from accidental discharge of prohibited materials or other wastes into "
              "the MS4 through the use of structural and nonstructural BMPs.",
              ("Install and maintain BMPs that protect the storm sewer from accidental discharges.",), inferred=True),
    Provision("required_bmps", "148-27A(2)", "BMPs required of a source of an illicit discharge",
              "may be required to implement, at said person's expense, additional structural and nonstructural BMPs "
              "to reduce or eliminate the source of pollutant(s) to the MS4.",
              ("Implement the structural and nonstructural BMPs this notice requires.",), inferred=True),
    Provision("access_reinstated", "148-28B", "MS4 access reinstated without approval",
              "A person commits an offense if the person reinstates MS4 access to premises terminated pursuant to "
              "this section without the prior approval of the SMO.",
              ("Disconnect the reinstated access at once.", "Petition the SMO before any reconnection."),
              inferred=True),
    Provision("spdes_permit", "148-29", "Industrial or construction activity SPDES permit",
              "Any person subject to an industrial or construction activity SPDES stormwater discharge permit shall "
              "comply with all provisions of such permit.",
              ("Comply with the SPDES permit and give the SMO proof of compliance in a form acceptable to the "
               "municipality.",), inferred=True),
    Provision("access", "148-30B(2)", "Access for inspection, sampling and records",
              "Facility operators shall allow the SMO ready access to all parts of the premises for the purposes of "
              "inspection, sampling, examination and copying of records as may be required to implement this "
              "article.",
              ("Allow the SMO access to the premises on the date the SMO sets.",), inferred=True),
    Provision("monitoring_equipment", "148-30B(4)", "Monitoring equipment maintained and calibrated",
              "The facility's sampling and monitoring equipment shall be maintained at all times in a safe and proper "
              "operating condition by the discharger at its own expense. All devices used to measure stormwater flow "
              "and quality shall be calibrated to ensure their accuracy.",
              ("Repair the sampling and monitoring equipment and have it calibrated; send the SMO the calibration "
               "record.",), inferred=True),
    Provision("access_denied", "148-30B(5)", "Unreasonable delay or denial of access",
              "Unreasonable delays in allowing the municipality access to a facility subject to this article is a "
              "violation of this article.",
              ("Allow the municipality access to the facility on the date the SMO sets.",), inferred=True),
    Provision("release_cleanup", "148-31", "Release: discovery, containment and cleanup",
              "said person shall take all necessary steps to ensure the discovery, containment, and cleanup of such "
              "release.",
              ("Contain the release and clean it up, including the storm sewer it reached.",), inferred=True),
    Provision("release_hazardous", "148-31", "Release of hazardous materials not notified",
              "In the event of such a release of hazardous materials, said person shall immediately notify emergency "
              "response agencies of the occurrence via emergency dispatch services.",
              ("Notify every future release of hazardous materials at once via emergency dispatch services.",),
              inferred=True),
    Provision("release_notice", "148-31", "Release of nonhazardous materials not notified",
              "In the event of a release of nonhazardous materials, said person shall notify the municipality in "
              "person or by telephone or facsimile no later than the next business day.",
              ("Report the release to the municipality now, and every future release by the next business day.",),
              inferred=True),
    Provision("release_written", "148-31", "Release notification not confirmed in writing",
              "Notifications in person or by telephone shall be confirmed by written notice addressed and mailed to "
              "the municipality within three business days of the telephone notice.",
              ("Mail the municipality the written confirmation of the release.",), inferred=True),
    Provision("release_record", "148-31", "On-site record of a release",
              "If the discharge of prohibited materials emanates from a commercial or industrial establishment, the "
              "owner or operator of such establishment shall also retain an on-site written record of the discharge "
              "and the actions taken to prevent its recurrence.",
              ("Write the record of the discharge and the actions taken to prevent its recurrence, and keep it on "
               "site for three years.",), inferred=True),
)

# -- City of Schenectady, ch. 148 Art. I (construction) -----------------------------------------
SCHENECTADY_I: tuple[Provision, ...] = (
    Provision("swppp_required", "148-4A", "Land development without an approved SWPPP",
              "no person shall commence or perform any land development activity as defined in § 148-5 herein "
              "without the review and approval of a stormwater pollution prevention plan (SWPPP) by the responsible "
              "board and/or the Stormwater Management Officer.",
              ("Stop land development activity until a SWPPP is reviewed and approved.",
               "Stabilize the disturbed areas meanwhile.", "Submit a SWPPP prepared by a licensed/certified "
               "professional."), inferred=True),
    Provision("revised_swppp_pending", "148-6C", "Work proceeding pending a revised plan",
              "Pending preparation and approval of a revised plan, land development activities shall not be allowed "
              "to proceed.",
              ("Stop land development activity until the revised SWPPP is approved.",
               "Stabilize the disturbed areas meanwhile.")),
    Provision("contractor_certification", "148-9", "Contractors' SWPPP certification",
              "All contractors and subcontractors identified in the SWPPP shall sign a copy of the following "
              "certification statement before undertaking any land development activity:",
              ("Have every contractor and subcontractor sign the SWPPP certification and send the SMO copies.",),
              inferred=True),
    Provision("swppp_amendment", "148-10A", "SWPPP not amended after a significant change",
              "The permittee shall amend the SWPPP whenever there is a significant change in design, construction, "
              "operation, or maintenance which may have a significant effect on the potential for the discharge of "
              "pollutants to the waters of the United States and which has not otherwise been addressed in the SWPPP",
              ("Amend the SWPPP for the change and submit the amendment to the SMO.",), inferred=True),
    Provision("swppp_new_contractor", "148-10C", "SWPPP not amended for a new contractor",
              "Additionally, the SWPPP shall be amended to identify any new contractor or subcontractor that will "
              "implement any measure of the SWPPP.",
              ("Amend the SWPPP to identify the new contractor or subcontractor.",), inferred=True),
    Provision("design_standards", "148-11A", "Design and performance standards",
              "All land development activities shall be subject to the following design and performance standards:",
              ("Bring the erosion and sediment control practices up to the New York Standards and Specifications for "
               "Erosion and Sediment Control.",)),
    Provision("watercourse_buffer", "148-11B(2)", "Clearing or grading in the watercourse buffer",
              "No clearing or grading shall take place within the established fifty-foot watercourse buffer area "
              "except to provide road crossings where permitted.",
              ("Stop clearing and grading in the buffer.", "Stabilize and replant the disturbed buffer.")),
    Provision("controls_before_clearing", "148-11B(3)", "Clearing before sediment controls are installed",
              "Clearing, except that necessary to establish sediment control devices, shall not begin until all "
              "sediment control devices have been installed and have been stabilized.",
              ("Stop clearing.", "Install and stabilize all sediment control devices before clearing resumes.")),
    Provision("stabilization", "148-11B(5)", "Stabilization within 14 days after work ceased",
              "The permittee shall initiate stabilization measures as soon as practicable in portions of the site "
              "where construction activities have temporarily or permanently ceased, but in no case more than 14 days "
              "after the construction activity in that portion of the site has temporarily or permanently ceased.",
              ("Stabilize the inactive disturbed areas (seed and mulch, or a non-vegetative cover).",)),
    Provision("stabilization_not_diligent", "148-11B(6)", "Project not diligently pursued: stabilization",
              "If the permittee is not diligently pursuing the project toward completion as determined by the City of "
              "Schenectady Stormwater Management Officer or designated agent, the Stormwater Management Officer may "
              "issue a notice of violation (see § 148-18A) and stipulate that the stabilization measures as outlined "
              "above shall be undertaken to prevent site erosion.",
              ("Undertake the stabilization measures of § 148-11B(5) across the site.",)),
    Provision("vegetation_established", "148-11B(7)", "Vegetative cover not established within 14 days",
              "If seeding or another vegetative erosion control method is used, it shall become established within "
              "14 days or the applicant may be required to re-seed the site or use a nonvegetative option.",
              ("Re-seed the site or use a non-vegetative stabilization.",)),
    Provision("stockpiles", "148-11B(9)", "Soil stockpiles not stabilized or covered",
              "Soil stockpiles must be stabilized or covered at the end of each workday.",
              ("Cover or stabilize the soil stockpiles at the end of each workday.",)),
    Provision("season_close", "148-11B(10)", "Site not stabilized at the close of the season",
              "The entire site must be stabilized using a heavy mulch layer or another method that does not require "
              "germination to control erosion at the close of the construction season.",
              ("Stabilize the entire site with a heavy mulch layer or another method that needs no germination.",)),
    Provision("dust", "148-11B(11)", "Blowing dust or sediment",
              "Techniques shall be employed to prevent the blowing of dust or sediment from the site.",
              ("Control dust (water, mulch, covers) so none blows from the site.",)),
    Provision("outlet_stabilization", "148-11B(15)", "Erosion at pipe and channel outlets",
              "Stabilization shall be adequate to prevent erosion located at the outlets of all pipes and "
              "paved/riprap channels.",
              ("Stabilize the outlets (riprap aprons or equivalent) and repair the erosion.",)),
    Provision("sediment_traps", "148-11B(16)", "Sediment traps or ponds not cleaned out",
              "Sediment shall be removed from sediment traps or sediment ponds whenever their design capacity has "
              "been reduced by 50%.",
              ("Remove the sediment from the traps and ponds.",)),
    Provision("severe_slopes", "148-11B(18)", "Disturbance of severe slopes",
              "In areas of severe slopes (exceeding 25%), land-disturbing activities are not permitted.",
              ("Stop land disturbance on the severe slopes.", "Stabilize and restore them.")),
    Provision("turbidity", "148-12A", "Turbidity: substantial visible contrast",
              "An increase in turbidity that will cause a substantial visible contrast to natural conditions;",
              ("Stop the sediment-laden discharge: repair or add perimeter controls, sediment traps and inlet "
               "protection.", "Stabilize the exposed soil that feeds it."), inferred=True),
    Provision("solids", "148-12B", "Suspended, colloidal and settleable solids",
              "An increase in suspended, colloidal and settleable solids that will cause deposition or impair the "
              "waters for their best uses; or",
              ("Stop the discharge of solids and remove the deposits it left.",), inferred=True),
    Provision("oil", "148-12C", "Oil, floating substances, grease",
              "Residue from oil and floating substances, nor visible oil film, or globules of grease.",
              ("Stop the source of oil or grease and clean up the residue.",), inferred=True),
    Provision("inspection_notice", "148-13A(1)", "Inspections not requested 48 hours ahead",
              "To obtain inspections, the applicant shall notify the Stormwater Management Officer or designated "
              "agent at least 48 hours before the following as required by the SWPPP:",
              ("Request the inspections the SWPPP requires at least 48 hours ahead.",), inferred=True),
    Provision("work_halted", "148-13A(2)", "Work continued before violations were corrected",
              "no further work shall be conducted except for site stabilization until any violations are corrected "
              "and all work previously completed has received approval by the City of Schenectady Stormwater "
              "Management Officer, or designated agent.",
              ("Stop all work except site stabilization until the violations are corrected and approved.",),
              inferred=True),
    Provision("preconstruction_assessment", "148-13B", "No pre-construction assessment",
              "The operator shall have a licensed/certified professional conduct an assessment of the site prior to "
              "the commencement of construction and certify in an inspection report that the appropriate erosion and "
              "sediment controls described in the SWPPP have been adequately installed or implemented to ensure "
              "overall preparedness of the site.",
              ("Have a licensed/certified professional assess the site and certify the controls in an inspection "
               "report.",), inferred=True),
    Provision("site_inspections", "148-13B", "Site inspections every seven days and after storms",
              "Following the commencement of construction, site inspections shall be conducted by a "
              "licensed/certified professional at least every seven calendar days and within 24 hours of the end of a "
              "storm event 0.5 inch or greater.",
              ("Have a licensed/certified professional inspect the site now, then at least every seven calendar days "
               "and within 24 hours of the end of every storm of 0.5 inch or more.",
               "Send the SMO the inspection reports."), inferred=True),
    Provision("inspection_reports", "148-13B", "Inspection reports incomplete",
              "During each inspection, the licensed/certified professional shall record the following information:",
              ("Record in each inspection report the items of § 148-13B(1)-(6).",), inferred=True),
    Provision("site_postings", "148-13C", "NOI and SWPPP not posted or kept at the site",
              "A copy of the NOI and a brief description of the project shall be posted at the construction site in "
              "a prominent place for public viewing. A copy of the SWPPP shall be retained at the site of the land "
              "development activity during construction from the beginning of construction activities to the date of "
              "final stabilization.",
              ("Post the NOI and the project description at the site; keep the SWPPP at the site.",), inferred=True),
    Provision("public_documents", "148-13C", "SWPPP and inspection reports not made available",
              "The SWPPP and inspection reports are public documents that the operator must make available for "
              "inspection, review and copying by any person within five business days of the operator receiving a "
              "written request by such person to review the SWPPP and/or the inspection reports.",
              ("Make the SWPPP and inspection reports available to the requester.",), inferred=True),
    Provision("site_log", "148-13D", "Site log book and monthly summary",
              "The operator shall maintain a record of all inspection reports in a site log book. The site log book "
              "shall be maintained on site and be made available to the City of Schenectady upon request. The "
              "operator shall post at the site, in a publicly accessible location, a summary of the site-inspection "
              "activities on a monthly basis.",
              ("Keep every inspection report in the site log book on site and show it to the City on request.",
               "Post the monthly summary of site inspections at the site."), inferred=True),
    Provision("as_built", "148-14A", "As-built plans of permanent practices",
              "All operators are required to submit as-built plans certified by a licensed/certified professional for "
              "any permanent stormwater management practices located on site after final stabilization.",
              ("Submit the certified as-built plans of the permanent stormwater management practices.",),
              inferred=True),
    Provision("swppp_compliance", "148-18A", "Conditions of the SWPPP",
              "The operator and all contractors and subcontractors must comply with all conditions of a SWPPP "
              "submitted pursuant to this article.",
              ("Install, repair and maintain the erosion and sediment controls as the SWPPP specifies.",)),
    Provision("stop_work", "148-18C", "Stop-work order not obeyed",
              "Persons receiving a stop-work order shall be required to halt all land development activities, except "
              "those activities that address the violation(s) identified in the stop-work order.",
              ("Halt all land development activity except what addresses the violations.",)),
)

CATALOGUE: dict[str, tuple[Provision, ...]] = {"ramapo-218": RAMAPO, "schenectady-148-II": SCHENECTADY_II,
                                               "schenectady-148-I": SCHENECTADY_I}

# The provision a notice cites when its record names none (notices issued before the catalogue).
DEFAULT = {"ramapo-218": "illicit_discharge", "schenectady-148-II": "illicit_discharge",
           "schenectady-148-I": "turbidity"}


def _check() -> None:
    for law, items in CATALOGUE.items():
        keys = [p.key for p in items]
        dupes = {k for k in keys if keys.count(k) > 1}
        if dupes:
            raise ValueError(f"{law}: provision keys used twice: {', '.join(sorted(dupes))}")


_check()

__all__ = ["Provision", "CATALOGUE", "DEFAULT", "RAMAPO", "SCHENECTADY_I", "SCHENECTADY_II"]
