// The one translation unit that compiles Boost.Asio and Beast (see net/asio.h).
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
