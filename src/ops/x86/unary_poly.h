/* Constants of the float32 exp, log and erf approximations shared by unary_avx2.c and
 * unary_avx512.c. The polynomial coefficients are least-squares fits (iteratively reweighted
 * towards minimax) made for flatrt:
 *   exp:  e^r = 1 + r + r^2 P(r), |r| <= ln2/2, P of degree 5 (relative error 5e-11)
 *   log:  log1p(f) = f - f^2/2 + f^3 P(f), f in [sqrt(1/2)-1, sqrt(2)-1], degree 8 (7.5e-10)
 *   erf:  erf(x) = x P(x^2), |x| < 1, degree 7 (3e-11);
 *         log erfc(a) = Q(a - 2.425), a in [1, 3.85], degree 10 (absolute 1.1e-9)
 */
#ifndef FRT_OPS_X86_UNARY_POLY_H
#define FRT_OPS_X86_UNARY_POLY_H

#define FRT_LOG2E_F 1.44269504088896341f
#define FRT_LN2_HI_F 0.693145751953125f      /* 15 significant bits: n * hi exact, |n| <= 151 */
#define FRT_LN2_LO_F 1.42860682028622677e-06f
#define FRT_LN2L_HI_F 0.693359375f          /* 9 significant bits: e * hi exact */
#define FRT_LN2L_LO_F -2.12194440054713770e-04f
#define FRT_SQRT2_F 1.41421356237309505f

#define FRT_EXP_P0 5.000000068e-01f
#define FRT_EXP_P1 1.666666587e-01f
#define FRT_EXP_P2 4.166629505e-02f
#define FRT_EXP_P3 8.333496987e-03f
#define FRT_EXP_P4 1.394465156e-03f
#define FRT_EXP_P5 1.979037253e-04f

#define FRT_LOG_P0 3.333331260e-01f
#define FRT_LOG_P1 -2.500000961e-01f
#define FRT_LOG_P2 2.000211901e-01f
#define FRT_LOG_P3 -1.666799525e-01f
#define FRT_LOG_P4 1.421954545e-01f
#define FRT_LOG_P5 -1.240559562e-01f
#define FRT_LOG_P6 1.188821676e-01f
#define FRT_LOG_P7 -1.167563229e-01f
#define FRT_LOG_P8 6.746499541e-02f

#define FRT_ERF_P0 1.128379167e+00f
#define FRT_ERF_P1 -3.761263843e-01f
#define FRT_ERF_P2 1.128378197e-01f
#define FRT_ERF_P3 -2.686540004e-02f
#define FRT_ERF_P4 5.220945412e-03f
#define FRT_ERF_P5 -8.482828462e-04f
#define FRT_ERF_P6 1.125694471e-04f
#define FRT_ERF_P7 -9.641505974e-06f

#define FRT_ERF_AMAX 3.85f
#define FRT_ERFC_MID 2.425f
#define FRT_ERFC_Q0 -7.410668968e+00f
#define FRT_ERFC_Q1 -5.211283635e+00f
#define FRT_ERFC_Q2 -9.413757811e-01f
#define FRT_ERFC_Q3 -1.153213339e-02f
#define FRT_ERFC_Q4 2.330076659e-03f
#define FRT_ERFC_Q5 -4.569403527e-04f
#define FRT_ERFC_Q6 8.390431762e-05f
#define FRT_ERFC_Q7 -1.407166630e-05f
#define FRT_ERFC_Q8 1.960200881e-06f
#define FRT_ERFC_Q9 -4.005169463e-08f
#define FRT_ERFC_Q10 -5.733628328e-08f

#endif
