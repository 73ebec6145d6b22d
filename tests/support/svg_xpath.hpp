// Reading an SVG the way a browser must: parsed by libxml2 (a real XML parser), then asked with
// XPath. The prefix "s" is the SVG namespace:
//
//     EXPECT_EQ(svg_xpath_number(svg, "count(//s:rect[@class='cell'])"), 7 * 13);
//
// Link the test with LibXml2::LibXml2.
#pragma once

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include <cmath>
#include <string>

namespace xenc::test {

/// The number an XPath expression gives on a parsed document (NAN if it does not evaluate);
/// frees the document.
inline double xpath_number_of(xmlDocPtr doc, const std::string& expr) {
  if (!doc) return NAN;
  xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
  xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
  xmlXPathObjectPtr obj = xmlXPathEvalExpression(BAD_CAST expr.c_str(), ctx);
  const double v = obj ? xmlXPathCastToNumber(obj) : NAN;
  if (obj) xmlXPathFreeObject(obj);
  xmlXPathFreeContext(ctx);
  xmlFreeDoc(doc);
  return v;
}

/// Evaluates an XPath number expression on an SVG held in a string; NAN if it is not XML.
inline double svg_xpath_number(const std::string& svg, const std::string& expr) {
  return xpath_number_of(xmlReadMemory(svg.data(), int(svg.size()), "figure.svg", nullptr,
                                       XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
                         expr);
}

/// The same on an SVG file; NAN if the file is missing or not XML.
inline double svg_file_xpath_number(const std::string& path, const std::string& expr) {
  return xpath_number_of(
      xmlReadFile(path.c_str(), nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
      expr);
}

}  // namespace xenc::test
